"""Rules the approval dialog offers under "Always allow" — never more than what was approved.

Safe by construction, because a person ticks these in a hurry:

* Shell commands (subjects are a simple command's words joined by spaces): the exact command,
  or ``<program> <subcommand> *`` together with the exact ``<program> <subcommand>`` (the
  pattern language has no optional part). A pattern never ends in a bare prefix glued to ``*``
  (``ls*`` would match ``lsof``); it never keeps a word past the first non-option word after
  the program; programs that run other commands (``sudo``, ``bash``, ``xargs``…) or destroy
  things (``rm``, ``dd``…) are only offered exactly.
* Paths: literal names are escaped (``escape_pattern``), so a folder called ``build*`` is not a
  wildcard. A folder rule covers one folder's direct entries and is never offered for ``/``,
  the home folder, or the project folder's parent or any other ancestor of it.
* Compound calls (``a && b | c``): one exact rule per part the rules did not deny, offered
  together, and none for denied parts.
* Every suggestion says, computed from its patterns, what else it would allow.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.permissions.patterns import (
    escape_pattern,
    has_wildcard,
    is_relative_path_pattern,
    unescape_pattern,
)
from app.core.permissions.rules import InvalidRuleError, PermissionRule
from app.core.tools.base import RiskLevel, SubjectKind, ToolCategory, ToolSpec

if TYPE_CHECKING:
    from app.core.permissions.service import Decision

RULE_PRIORITY = 10

# Programs whose first non-option argument selects what they do: a rule keeps that subcommand.
SUBCOMMAND_PROGRAMS = frozenset({
    "apt", "apt-get", "brew", "bun", "bundle", "cargo", "composer", "conda", "deno", "docker",
    "dotnet", "gem", "gh", "git", "go", "gradle", "helm", "hg", "kubectl", "mvn", "npm", "pip",
    "pip3", "pipx", "pnpm", "podman", "poetry", "rustup", "svn", "systemctl", "terraform", "uv",
    "yarn",
})
# Programs that run a command given in their arguments (or code): "any arguments" would be
# "any command", so only the exact command is offered.
_RUNS_OTHER_COMMANDS = frozenset({
    "awk", "bash", "builtin", "busybox", "chroot", "command", "csh", "dash", "doas", "env",
    "eval", "exec", "fish", "flock", "gawk", "ionice", "ksh", "ltrace", "nice", "nohup",
    "node", "nodejs", "osascript", "parallel", "perl", "php", "powershell", "pwsh", "ruby",
    "script", "setsid", "sh", "ssh", "stdbuf", "strace", "su", "sudo", "tcsh", "time",
    "timeout", "unbuffer", "watch", "xargs", "zsh",
})
_INTERPRETER = re.compile(r"^(python|pypy|lua|tclsh|wish|Rscript)[0-9.]*$")
# Programs where "with any arguments" can destroy data or the system: exact only.
_DESTRUCTIVE = frozenset({
    "chgrp", "chmod", "chown", "dd", "kill", "killall", "mkfs", "pkill", "reboot", "rm",
    "rmdir", "shred", "shutdown", "truncate", "wipefs",
})

_EXAMPLE_ARGS = "--any-option any/other/file"


@dataclass(frozen=True)
class RuleSuggestion:
    """One "Always allow" choice: the rules it adds and what they would also allow.

    ``items`` names what each rule covers, for choices with several rules ("these 3
    commands"); ``also_matches`` is the honest summary shown before the person ticks it.
    """

    label: str
    rules: tuple[PermissionRule, ...]
    also_matches: str
    items: tuple[str, ...] = ()

    @property
    def rule(self) -> PermissionRule:
        """The first (for single-rule suggestions, the only) rule."""
        return self.rules[0]


def suggest_allow_rules(server_id: str, tool_name: str, tool_input: Mapping[str, Any],
                        spec: ToolSpec | None, project_root: Path | str | None,
                        decision: Decision | None = None) -> list[RuleSuggestion]:
    """Narrowest first. ``decision`` (this call's) says which parts the rules denied."""
    wd = os.path.realpath(project_root) if project_root is not None else None
    # Paths the sensitive-path check made ask: only an exact rule that says so can allow them.
    sensitive = {path for path, _entry in decision.facts.sensitive} \
        if decision is not None and decision.facts is not None else set()
    builder = _Builder(server_id, tool_name, spec, wd, sensitive)
    subjects = _subjects(tool_input, spec, wd)
    suggestions: list[RuleSuggestion] = []
    if subjects:
        parts = _open_parts(subjects, decision, sensitive)
        if len(parts) == 1:
            suggestions += builder.single(parts[0])
        elif len(parts) > 1:
            suggestions += builder.several(parts)
    if _offer_whole_tool(spec):
        suggestions += builder.whole_tool()
    return suggestions


def _subjects(tool_input: Mapping[str, Any], spec: ToolSpec | None,
              wd: str | None) -> list[str] | None:
    """The call's subjects, or None when they cannot all be known (then nothing narrow)."""
    if spec is None or spec.subjects_fn is None:
        return None
    try:
        subjects = spec.subjects(tool_input, Path(wd) if wd is not None else None)
    except Exception:  # SubjectError included: a call not fully understood gets no rule
        return None
    if not subjects or not all(isinstance(s, str) and s for s in subjects):
        return None
    return list(dict.fromkeys(subjects))  # each distinct part once, in order


def _open_parts(subjects: list[str], decision: Decision | None,
                sensitive: Collection[str] = ()) -> list[str]:
    """The parts a rule should be offered for: not denied, and not already allowed (a
    sensitive path a rule allows still asks, so it is open)."""
    verdicts = {part.subject: part.kind for part in decision.subjects} if decision else {}
    return [s for s in subjects if verdicts.get(s, "ask") == "ask" or
            (s in sensitive and verdicts.get(s) != "deny")]


def _offer_whole_tool(spec: ToolSpec | None) -> bool:
    """"Every call" is offered only when nothing narrower describes the call (no subjects),
    or for tools that cannot change anything; for a risky tool it would allow far more than
    the call being approved."""
    return spec is None or spec.subjects_fn is None or spec.risk != RiskLevel.HIGH


class _Builder:
    def __init__(self, server_id: str, tool_name: str, spec: ToolSpec | None,
                 wd: str | None, sensitive: set[str] | None = None) -> None:
        self.sensitive = sensitive or set()
        self.server_id = server_id
        self.tool_name = tool_name
        self.spec = spec
        self.kind: SubjectKind = spec.subject_kind if spec is not None else "text"
        self.wd = wd

    def _rule(self, pattern: str | None, what: str, ignore_flow: bool = False) -> PermissionRule:
        description = "Allowed from the approval dialog" + (f": {what}" if what else "")
        rule = PermissionRule(decision="allow", server_id=self.server_id,
                              tool_name=self.tool_name, input_pattern=pattern,
                              priority=RULE_PRIORITY, description=description,
                              ignore_flow=ignore_flow).validated()
        if pattern is not None and rule.input_pattern != pattern:
            # Validation turns an empty pattern into "any input": never for a narrow rule.
            raise InvalidRuleError("a narrow rule needs its exact pattern")
        return rule

    def _suggestion(self, label: str, patterns: Sequence[tuple[str | None, str]],
                    items: tuple[str, ...] = (), ignore_flow: bool = False
                    ) -> list[RuleSuggestion]:
        try:
            rules = tuple(self._rule(pattern, what, ignore_flow) for pattern, what in patterns)
        except InvalidRuleError:
            return []  # e.g. a control character or a very long command: no rule can hold it
        return [RuleSuggestion(label, rules, describe_rules(rules, self.kind), items)]

    # -- one part ----------------------------------------------------------------------------

    def single(self, subject: str) -> list[RuleSuggestion]:
        if self.kind == "path":
            return self._path_options(subject)
        if self.kind == "host":
            return self._suggestion(f"Always allow {self.tool_name} for the host {subject}",
                                    [(escape_pattern(subject), f"the host {subject}")])
        out = self._suggestion(f"Always allow {self.tool_name} for exactly `{subject}`",
                               [(escape_pattern(subject), f"exactly `{subject}`")])
        prefix = command_prefix(subject) if self._is_command_tool() else None
        if prefix is not None:
            escaped = escape_pattern(prefix)
            out += self._suggestion(
                f"Always allow {self.tool_name} for `{prefix}` with any arguments",
                [(escaped, f"exactly `{prefix}`"),
                 (escaped + " *", f"`{prefix}` with any arguments")])
        return out

    def _is_command_tool(self) -> bool:
        return self.spec is not None and self.spec.category in (ToolCategory.EXECUTION,
                                                                ToolCategory.COMPOSITE)

    def _path_options(self, path: str) -> list[RuleSuggestion]:
        exact, shown = self._exact_path(path)
        if path in self.sensitive:
            # A secret: exactly this file, with a rule that says it skips the sensitive-path
            # check (the conversation is still labelled as having read a secret).
            return self._suggestion(
                f"Always allow {self.tool_name} for exactly {shown} (a sensitive file)",
                [(exact, f"exactly {shown}, skipping the sensitive-path check")],
                ignore_flow=True)
        out = self._suggestion(f"Always allow {self.tool_name} for exactly {shown}",
                               [(exact, f"exactly {shown}")])
        folder = os.path.dirname(path)
        if folder and folder != path and folder_may_be_suggested(folder, self.wd):
            if folder == self.wd:
                pattern, where = "*", "files directly in the project folder"
            else:
                folder_exact, folder_shown = self._exact_path(folder)
                pattern, where = f"{folder_exact}/*", f"files directly in {folder_shown}/"
            out += self._suggestion(f"Always allow {self.tool_name} for {where}",
                                    [(pattern, where)])
        return out

    def _exact_path(self, path: str) -> tuple[str, str]:
        """(pattern matching exactly ``path``, how to show it): relative inside the project."""
        wd = self.wd
        if wd is not None and path.startswith(wd.rstrip("/") + "/"):
            relative = path[len(wd.rstrip("/")) + 1:]
            pattern = escape_pattern(relative)
            # A relative pattern starting with `~` would be read as a home folder: go absolute.
            if is_relative_path_pattern(pattern):
                return pattern, relative
        return escape_pattern(path), path

    # -- several parts -----------------------------------------------------------------------

    def several(self, subjects: list[str]) -> list[RuleSuggestion]:
        noun = {"path": "paths", "host": "hosts"}.get(self.kind, "commands")
        shown_parts = [self._exact_path(s) if self.kind == "path" else (escape_pattern(s), s)
                       for s in subjects]
        return self._suggestion(f"Always allow these {len(subjects)} {noun}",
                                [(pattern, f"exactly `{shown}`") for pattern, shown in shown_parts],
                                tuple(shown for _pattern, shown in shown_parts))

    # -- the whole tool ----------------------------------------------------------------------

    def whole_tool(self) -> list[RuleSuggestion]:
        return self._suggestion(f"Always allow every {self.tool_name} call", [(None, "")])


def command_prefix(command: str) -> str | None:
    """``<program>`` or ``<program> <subcommand>`` a broader rule may keep, or None.

    None when only the exact command is safe to offer: a program that runs other commands or
    destroys data, a subcommand program without a subcommand, or one whose first argument is
    an option (``git -C dir log``: options before the subcommand change what it does).
    """
    words = command.split(" ")
    program = words[0]
    if not program or "=" in program:
        return None  # an environment assignment, not a program
    name = program.rsplit("/", 1)[-1]
    if (name in _RUNS_OTHER_COMMANDS or name in _DESTRUCTIVE or _INTERPRETER.match(name)
            or name.startswith("mkfs")):
        return None
    if name in SUBCOMMAND_PROGRAMS:
        if len(words) < 2 or not words[1] or words[1].startswith("-"):
            return None
        return f"{program} {words[1]}"
    return program


def folder_may_be_suggested(folder: str, project_root: str | None) -> bool:
    """Whether "files directly in ``folder``" may be offered: never ``/``, the home folder, or
    the project folder's parent or any other ancestor of the project folder."""
    folder = os.path.normpath(folder)
    if folder in ("/", "") or folder == os.path.normpath(os.path.expanduser("~")):
        return False
    if os.path.realpath(folder) == os.path.realpath(os.path.expanduser("~")):
        return False
    if project_root is not None:
        wd = os.path.normpath(project_root)
        if wd != folder and wd.startswith(folder.rstrip("/") + "/"):
            return False
    return True


# -- what a rule also allows ------------------------------------------------------------------


def describe_rules(rules: Sequence[PermissionRule], kind: SubjectKind) -> str:
    """What the rules allow beyond the approved call, computed from their patterns."""
    texts = [text for text in (describe_pattern(r.input_pattern, kind, r.tool_name or "")
                               for r in rules) if text]
    if not texts:
        return ("Nothing else: only exactly this." if len(rules) == 1
                else f"Nothing else: only exactly these {len(rules)}.")
    return "Also matches: " + "; ".join(dict.fromkeys(texts)) + "."


def describe_pattern(pattern: str | None, kind: SubjectKind, tool_name: str = "") -> str:
    """What else ``pattern`` matches, in words, or "" if it matches only its own text."""
    if pattern is None:
        return f"every {tool_name or 'tool'} call, whatever its input"
    literal = unescape_pattern(pattern)
    if kind == "host":
        if not has_wildcard(pattern):
            return (f"any page on `{literal}` (any path, http or https, any port, and other "
                    f"spellings of the same host), but not its subdomains")
        return f"any host matching `{literal}` (each * stands for any text)"
    if not has_wildcard(pattern):
        if kind == "path" and is_relative_path_pattern(pattern):
            return f"`{literal}` in whichever project folder is open"
        return ""
    if kind == "path":
        body = pattern[:-2] if pattern.endswith("/*") else None
        if pattern == "*":
            return ("any file or folder directly in the project folder (whichever is open; "
                    "not inside its subfolders), e.g. `any-other-file`")
        if body is not None and not has_wildcard(body):
            folder = unescape_pattern(body)
            where = (" of whichever project folder is open"
                     if is_relative_path_pattern(pattern) else "")
            return (f"any file or folder directly in `{folder}/`{where} (not inside its "
                    f"subfolders), e.g. `{folder}/any-other-file`")
        return f"any path matching `{literal}` (* stays in one folder, ** crosses folders)"
    if pattern.endswith(" *") and not has_wildcard(pattern[:-2]):
        prefix = unescape_pattern(pattern[:-2])
        return (f"`{prefix}` with any arguments, e.g. `{prefix} -a` or "
                f"`{prefix} {_EXAMPLE_ARGS}`")
    return f"any input matching `{literal}` (each * stands for any text)"
