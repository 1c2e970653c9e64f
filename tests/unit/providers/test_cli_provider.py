"""CLI provider: rg/fd detection, aliases, suggestions, output identical to the built-ins."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from app.core.sandbox import Sandbox
from app.core.tools.base import ToolContext, ToolResult
from app.core.tools.builtin.glob_search import GlobSearchTool
from app.core.tools.builtin.grep_search import GrepSearchTool
from app.core.tools.default_registry import cli_provider
from app.core.tools.providers.base import ToolProvider
from app.core.tools.providers.cli import FD_NO_REQUIRE_GIT, CliGlobSearchTool

RG = shutil.which("rg")
FD = shutil.which("fd") or shutil.which("fdfind")
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep (rg) is not installed")
needs_fd = pytest.mark.skipif(FD is None, reason="fd (fd or fdfind) is not installed")
# The wrapper scripts that prove which binary ran live under pytest's /tmp, which the sandbox
# replaces; these tests compare outputs without it (the sandboxed runs are tested at the end).
UNSANDBOXED = Sandbox.off("wrapper scripts under /tmp")
MISSING = "tebiki-no-such-program"


def wrapper(tmp_path: Path, real: str, name: str) -> tuple[Path, Path]:
    """A script that logs its arguments and runs the real program: proves which binary ran."""
    log = tmp_path / f"{name}.log"
    script = tmp_path / name
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    return script, log


def fake_program(tmp_path: Path, name: str, version_line: str) -> Path:
    script = tmp_path / name
    script.write_text(f'#!/bin/sh\necho "{version_line}"\n')
    script.chmod(0o755)
    return script


@pytest.fixture
def tree(project: Path) -> Path:
    """A small project: nested folders, .gitignore, hidden files, symlinks, an empty folder."""
    files = {
        "src/app.py": "import os\ndef main():\n    return os.getcwd()  # TODO tidy\n",
        "src/util/helpers.py": "def helper():\n    pass\n# todo: more\n",
        "src/util/data.json": '{"todo": true}\n',
        "docs/readme.md": "# Title\nTODO write docs\n\nMore text\n",
        "build/out.py": "TODO generated\n",
        "debug.log": "TODO log\n",
        ".hidden/secret.py": "TODO hidden\n",
        ".env": "TODO=1\n",
        "-dash.txt": "TODO dash\n",
        "space name.txt": "TODO space\n",
        ".gitignore": "build/\n*.log\n",
        "bin.dat": "TODO\x00binary\n",
    }
    for i, (rel, text) in enumerate(sorted(files.items())):
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_000_000 + i * 1000, 1_000_000 + i * 1000))
    (project / "empty").mkdir()
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "link_to_src").symlink_to(project / "src")
    (project / "dangling").symlink_to(project / "nowhere")
    return project


async def both(builtin: object, cli: object, args: dict, ctx: ToolContext
               ) -> tuple[ToolResult, ToolResult]:
    a = await builtin.execute(args, ctx)  # type: ignore[attr-defined]
    b = await cli.execute(args, ctx)  # type: ignore[attr-defined]
    return a, b


# -- detection and suggestions -------------------------------------------------------------------

def test_missing_programs_give_install_suggestions() -> None:
    provider = cli_provider({"rg": [MISSING], "fd": [MISSING, MISSING + "2"]}, platform="linux")
    assert isinstance(provider, ToolProvider)
    assert provider.is_available() is False
    assert provider.tools() == []
    assert provider.display_name == "CLI tools"
    hints = provider.suggestions()
    assert len(hints) == 2
    assert hints[0].startswith("Install ripgrep for a faster grep_search: apt install ripgrep.")
    assert f"looked for: {MISSING}" in hints[0]
    assert "apt install fd-find" in hints[1] and "glob_search" in hints[1]
    mac = cli_provider({"rg": [MISSING]}, platform="darwin", search_path="/nonexistent")
    assert any("brew install ripgrep" in h for h in mac.suggestions())
    quiet = cli_provider({"rg": [MISSING], "fd": [MISSING]}, suggest_enhanced_tools=False)
    assert quiet.suggestions() == []


def test_too_old_versions_are_not_used(tmp_path: Path) -> None:
    old = fake_program(tmp_path, "rg", "ripgrep 11.0.2")
    junk = fake_program(tmp_path, "fd", "no version here")
    provider = cli_provider({"rg": [str(old)], "fd": [str(junk)]}, platform="linux")
    assert provider.is_available() is False
    hints = " ".join(provider.suggestions())
    assert "version 11.0.2; 12.0 or newer is needed" in hints
    assert "did not print a version" in hints


def test_aliases_by_program_or_tool_name_and_relative_paths_refused(tmp_path: Path) -> None:
    rg = fake_program(tmp_path, "myrg", "ripgrep 13.0.0")
    fd = fake_program(tmp_path, "fdfind", "fdfind 8.6.0")
    provider = cli_provider({"grep_search": str(rg), "glob_search": ["fdfind"]},
                           search_path=str(tmp_path))
    found = provider.detect()
    assert (found["rg"].path, found["rg"].version) == (str(rg), (13, 0, 0))
    assert (found["fd"].path, found["fd"].version) == (str(fd), (8, 6, 0))
    assert sorted(t.spec.name for t in provider.tools()) == ["glob_search", "grep_search"]
    assert provider.display_name == "CLI tools (ripgrep, fd)"
    relative = cli_provider({"rg": ["./myrg"], "fd": [MISSING]}, search_path=str(tmp_path))
    assert relative.is_available() is False
    # relative PATH entries are never searched (a project could plant a program there)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert cli_provider({"rg": ["myrg"], "fd": [MISSING]},
                           search_path=".").is_available() is False
    finally:
        os.chdir(cwd)
    with pytest.raises(ValueError, match="unknown CLI alias key"):
        cli_provider({"bat": "bat"})


def test_reload_detects_a_newly_installed_program(tmp_path: Path) -> None:
    provider = cli_provider({"rg": ["rg"], "fd": [MISSING]}, search_path=str(tmp_path))
    assert provider.is_available() is False
    fake_program(tmp_path, "rg", "ripgrep 14.1.0")
    assert provider.is_available() is False  # cached until reload()
    provider.reload()
    assert provider.is_available() is True
    assert [t.spec.name for t in provider.tools()] == ["grep_search"]


def test_specs_are_the_builtin_specs() -> None:
    assert CliGlobSearchTool("fd", (9, 0), GlobSearchTool()).spec is GlobSearchTool.spec
    from app.core.tools.providers.cli import CliGrepSearchTool
    assert CliGrepSearchTool("rg", GrepSearchTool()).spec is GrepSearchTool.spec
    assert GrepSearchTool.spec.server_id == "builtin"


# -- grep_search on rg ---------------------------------------------------------------------

@needs_rg
@pytest.mark.parametrize("args", [
    {"pattern": "TODO"},
    {"pattern": "todo", "case_insensitive": True},
    {"pattern": "TODO", "context_lines": 1},
    {"pattern": "TODO", "output_mode": "count"},
    {"pattern": "TODO", "output_mode": "files_with_matches"},
    {"pattern": "TODO", "file_pattern": "*.py"},
    {"pattern": "def \\w+", "path": "src"},
    {"pattern": "-e"},
    {"pattern": "--pre=sh"},
    {"pattern": "TODO", "path": "-dash.txt"},
    {"pattern": "(?<=# )TODO"},  # look-behind: rg refuses, the Python backend answers
    {"pattern": "TODO", "head_limit": 2, "offset": 1},
    {"pattern": "nothing-matches-this"},
    {"pattern": "TODO", "path": "missing-folder"},
    {"pattern": "TODO", "bogus": 1},
])
async def test_grep_output_is_identical_to_the_builtin(tree: Path, tmp_path: Path,
                                                       args: dict) -> None:
    assert RG is not None
    script, log = wrapper(tmp_path, RG, "rg-wrapper")
    provider = cli_provider({"rg": [str(script)], "fd": [MISSING]})
    (cli,) = provider.tools()
    ctx = ToolContext(sandbox=UNSANDBOXED, project_root=tree)
    builtin, ours = await both(GrepSearchTool(), cli, args, ctx)
    assert ours == builtin
    if "bogus" not in args and "missing" not in str(args.get("path")):
        calls = log.read_text().splitlines()
        assert len(calls) == 2 and calls[0] == "--version"  # detection, then the search
        assert calls[1].startswith("--no-config ")
        assert f" --regexp {args['pattern']} -- " in calls[1]


@needs_rg
async def test_explicit_tool_configuration_still_wins(tree: Path, tmp_path: Path) -> None:
    assert RG is not None
    script, log = wrapper(tmp_path, RG, "rg-wrapper")
    (cli,) = cli_provider({"rg": [str(script)], "fd": [MISSING]}).tools()
    ctx = ToolContext(sandbox=UNSANDBOXED, project_root=tree,
                      tool_config={"grep_search": {"use_rg": "never"}})
    builtin, ours = await both(GrepSearchTool(), cli, {"pattern": "TODO"}, ctx)
    assert ours == builtin
    assert log.read_text().splitlines() == ["--version"]


# -- glob_search on fd ---------------------------------------------------------------------

GLOBS = [
    {"pattern": "**/*"},
    {"pattern": "*"},
    {"pattern": "**/*.py"},
    {"pattern": "src/**/*.py"},
    {"pattern": "*.{md,txt}", "base_dir": "docs"},
    {"pattern": "**/util/*"},
    {"pattern": "*/"},
    {"pattern": "-*"},
    {"pattern": "**/[!a]*.py"},
    {"pattern": "**/*", "max_results": 3},
    {"pattern": "**/*.nothing"},
    {"pattern": "link_to_src/*"},
    {"pattern": "src/app.py"},  # no walk: answered by the built-in
    {"pattern": "*", "base_dir": "missing"},
    {"pattern": "*", "base_dir": "src/app.py"},
    {"pattern": ""},
    {"pattern": "*", "extra": True},
]


@needs_fd
@pytest.mark.parametrize("args", GLOBS)
async def test_glob_output_is_identical_to_the_builtin(tree: Path, tmp_path: Path,
                                                       args: dict) -> None:
    assert FD is not None
    script, log = wrapper(tmp_path, FD, "fd-wrapper")
    provider = cli_provider({"rg": [MISSING], "fd": [str(script)]})
    (cli,) = provider.tools()
    ctx = ToolContext(sandbox=UNSANDBOXED, project_root=tree)
    builtin, ours = await both(GlobSearchTool(), cli, args, ctx)
    assert ours == builtin
    assert not builtin.is_error or "base_dir" in args or not args["pattern"] or "extra" in args
    walks = [c for c in log.read_text().splitlines() if c != "--version"]
    expect_walk = not builtin.is_error and args["pattern"] not in ("src/app.py",)
    assert bool(walks) == expect_walk
    for call in walks:  # no user text reaches fd
        assert call.startswith("--hidden --exclude .git --print0")
        assert args["pattern"] not in call.split()


@needs_fd
async def test_glob_outside_git_with_old_fd_uses_the_builtin_walker(tree: Path,
                                                                    tmp_path: Path) -> None:
    assert FD is not None
    shutil.rmtree(tree / ".git")
    script, log = wrapper(tmp_path, FD, "fd-wrapper")
    (cli,) = cli_provider({"rg": [MISSING], "fd": [str(script)]}).tools()
    ctx = ToolContext(sandbox=UNSANDBOXED, project_root=tree)
    builtin, ours = await both(GlobSearchTool(), cli, {"pattern": "**/*"}, ctx)
    assert ours == builtin
    assert "build/out.py" not in builtin.content  # .gitignore honoured without git too
    walks = [c for c in log.read_text().splitlines() if c != "--version"]
    assert bool(walks) == (cli.fd_version >= FD_NO_REQUIRE_GIT)  # type: ignore[attr-defined]


@needs_fd
async def test_glob_respects_use_fd_never_and_a_vanished_fd(tree: Path, tmp_path: Path) -> None:
    assert FD is not None
    script, log = wrapper(tmp_path, FD, "fd-wrapper")
    (cli,) = cli_provider({"rg": [MISSING], "fd": [str(script)]}).tools()
    ctx = ToolContext(sandbox=UNSANDBOXED, project_root=tree,
                      tool_config={"glob_search": {"use_fd": "never"}})
    builtin, ours = await both(GlobSearchTool(), cli, {"pattern": "**/*.py"}, ctx)
    assert ours == builtin and log.read_text().splitlines() == ["--version"]
    script.unlink()
    ctx = ToolContext(sandbox=UNSANDBOXED, project_root=tree)
    builtin, ours = await both(GlobSearchTool(), cli, {"pattern": "**/*.py"}, ctx)
    assert ours == builtin


@needs_fd
@pytest.mark.parametrize("args", [{"pattern": "**/*.py"}, {"pattern": "*"},
                                  {"pattern": "src/**/*", "base_dir": "."}])
async def test_glob_in_the_sandbox_is_identical_to_the_builtin(tree: Path, args: dict) -> None:
    from app.core.sandbox import Sandbox, probe_sandbox
    status = probe_sandbox()
    if not status.available:
        pytest.skip(f"no sandbox here: {status.reason}")
    assert FD is not None
    (cli,) = cli_provider({"rg": [MISSING], "fd": [FD]}).tools()
    ctx = ToolContext(project_root=tree, sandbox=Sandbox(status, True))
    builtin, ours = await both(GlobSearchTool(), cli, args, ctx)
    assert ours == builtin and not ours.is_error


@needs_fd
async def test_glob_falls_back_to_the_builtin_when_the_sandbox_is_required_and_missing(
        tree: Path, tmp_path: Path) -> None:
    from app.core.sandbox import Sandbox, SandboxStatus
    assert FD is not None
    script, log = wrapper(tmp_path, FD, "fd-wrapper")
    (cli,) = cli_provider({"rg": [MISSING], "fd": [str(script)]}).tools()
    ctx = ToolContext(project_root=tree, sandbox=Sandbox(SandboxStatus.unavailable("x"), True))
    builtin, ours = await both(GlobSearchTool(), cli, {"pattern": "**/*.py"}, ctx)
    assert ours == builtin
    assert [c for c in log.read_text().splitlines() if c != "--version"] == []  # fd never ran
