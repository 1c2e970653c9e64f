"""Custom tools from TOML: a CLI command becomes a first-class tool.

Files, read in this order (a tool in a later file replaces one of the same name):

1. ``tools.toml`` in the data dir (the person's own tools),
2. ``.tebiki/tools.toml`` in the project folder (the project's tools).

Why argv and not a shell: the seed shell-escapes values into a command line; here the template
is split into words once, at load time, with the same parser shell_exec uses (shell quoting, no
shell features), and parameters are substituted *inside* those words afterwards. A value can
therefore never add a word, an operator or a substitution: ``; rm -rf ~``, ``$(…)``, quotes and
newlines arrive as one literal argv item, and the program runs through ``process_runner``
(no shell, minimal environment, process-group kill on timeout, output capped).

Template rules: ``{name}`` is a placeholder (``{{``/``}}`` are literal braces); the first word,
the program, must be literal; a placeholder may be a whole word (``{path}``) or part of one
(``--title={title}``). An optional parameter that is absent drops every word it appears in, so
``--title={title}`` vanishes cleanly. ``flag = "--title"`` on a parameter whose placeholder is a
whole word emits ``--title <value>`` only when the value is given; for a boolean it emits the
flag when true and nothing when false (a boolean without a flag renders ``true``/``false``).

The program runs in the OS sandbox (the same wall as shell_exec's; refused with a clear error
when the sandbox is required and missing). Two optional keys of a tool table set it::

    [fetch_issue]
    description = "Show a GitHub issue"
    command = "gh issue view {number}"
    network = true              # default false: no network at all (web-facing tools need it)
    write_folders = []          # default: the project folder; [] writes nowhere; ["."] the
                                # project, ["build", "/abs/path"] relative or absolute folders

Everywhere else is read-only, the project's ``.git`` stays read-only, /tmp is private and the
person's secrets (``app.core.sensitive_paths``) are hidden. A project's tools.toml may only
name folders inside the project: a tool that names one outside is not loaded.

A value that would start a word with ``-`` is refused (it would be read as an option), unless the
word comes after a literal ``--`` in the template (``grep -e {pattern} -- {path}``), the
parameter says ``allow_leading_dash = true`` or the value is one of its ``enum`` values.

Security notes: ``.tebiki/tools.toml`` comes with the repository. Tools from the person's own
file have ``server_id = "custom"``, tools from a project's file ``server_id = "project"``, so
rules written for built-ins or for the person's own tools never approve a repository's tools,
and a custom tool that shadows a built-in name is decided by its own rules only (default: ask).
Only the person's own file (data dir) may shadow a built-in tool name: a project file that tries
gets a load error, so a cloned repository cannot change what ``grep_search`` runs.
Every tool runs in git_safety's environment for the project folder (no hooks, no pager, no
repository-configured helper programs), whatever its program: a git reached through a wrapper
(``timeout 20 git status``) or started by another program inherits it.
"""


from typing import TYPE_CHECKING

# The provider is what start-up needs (app.core.services); the rest (the TOML loader, the
# template parser, the tool itself: ~10 ms of imports) loads when a tools.toml is read or one of
# these names is asked for.
from app.core.tools.providers.custom.provider import (
    PROJECT_TOOLS_FILE,
    TOOLS_FILE,
    CustomToolsProvider,
)

if TYPE_CHECKING:
    from app.core.tools.providers.custom.loading import (
        MAX_FILE_BYTES,
        MAX_TIMEOUT_S,
        ToolDefinitionError,
        build_tool,
        load_tools_file,
    )
    from app.core.tools.providers.custom.template import (
        Param,
        Placeholder,
        RenderError,
        TemplateError,
        Word,
        parse_template,
    )
    from app.core.tools.providers.custom.tool import PROJECT_SERVER_ID, CustomTool, ToolSource

_LAZY = {
    **dict.fromkeys(("MAX_FILE_BYTES", "MAX_TIMEOUT_S", "ToolDefinitionError", "build_tool",
                     "load_tools_file"), "loading"),
    **dict.fromkeys(("Param", "Placeholder", "RenderError", "TemplateError", "Word",
                     "parse_template"), "template"),
    **dict.fromkeys(("PROJECT_SERVER_ID", "CustomTool", "ToolSource"), "tool"),
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # once
    return value


__all__ = [
    "MAX_FILE_BYTES",
    "MAX_TIMEOUT_S",
    "PROJECT_SERVER_ID",
    "PROJECT_TOOLS_FILE",
    "TOOLS_FILE",
    "CustomTool",
    "CustomToolsProvider",
    "Param",
    "Placeholder",
    "RenderError",
    "TemplateError",
    "ToolDefinitionError",
    "ToolSource",
    "Word",
    "build_tool",
    "load_tools_file",
    "parse_template",
]
