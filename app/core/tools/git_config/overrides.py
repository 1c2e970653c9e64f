"""The config overrides git runs with: a fixed set, and a harmless value for every
program-running key a repository defines (the tables below are the whole policy)."""

from __future__ import annotations

import re
from collections.abc import Iterable

# What a disabled diff program becomes. git runs diff.external and diff.<driver>.command
# through the shell and stops when they fail, so this prints why and fails. An empty value
# would make git try to run "" (exit 128 with a baffling message), and `true` would silently
# drop the diff.
DISABLED_DIFF_PROGRAM = ("echo 'tebiki: this diff program comes from the repository "
                         "configuration and was not run; use git diff --no-ext-diff' >&2; false")

# Always set. Later entries win over repository values of the same key (same scope, read later).
_FIXED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("protocol.ext.allow", "never"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("merge.verifySignatures", "false"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("core.untrackedCache", "false"),
    # a bare repository shipped inside a work tree must not be entered by `cd` (git 2.38+;
    # older versions ignore the key, and the directory scan below treats such a folder as a
    # repository anyway)
    ("safe.bareRepository", "explicit"),
    # nothing git starts may detach from the process group the runner kills
    ("gc.autoDetach", "false"),
)

# Program-running keys a repository may define, and the harmless value each gets. Matched
# against keys as git lists them (section and variable lower-cased, subsection as written).
_NEUTRALIZE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE | re.DOTALL), v) for p, v in (
        (r"^filter\..+\.(clean|smudge)$", "cat"),
        (r"^filter\..+\.process$", ""),
        (r"^filter\..+\.required$", "false"),
        (r"^diff\..+\.textconv$", "cat"),
        (r"^diff\..+\.command$", DISABLED_DIFF_PROGRAM),
        (r"^diff\.external$", DISABLED_DIFF_PROGRAM),
        (r"^merge\..+\.driver$", "false"),
        (r"^pager\..+$", "false"),
        (r"^core\.(sshcommand|askpass|gitproxy|alternaterefscommand)$", "false"),
        (r"^credential(\..+)?\.helper$", ""),
        (r"^gpg(\..+)?\.program$", "false"),
        (r"^gpg\.ssh\.defaultkeycommand$", "false"),
        (r"^remote\..+\.(uploadpack|receivepack)$", "false"),
        (r"^interactive\.difffilter$", "cat"),
        (r"^trailer\..+\.(command|cmd)$", "true"),
        (r"^core\.hookspath$", "/dev/null"),
        (r"^hook\..+\.command$", "true"),
        (r"^(diff|merge)tool\..+\.(cmd|path)$", "false"),
        (r"^(diff|merge)\.(gui)?tool$", ""),
        (r"^(web\.browser|browser\..+\.(cmd|path)|man\..+\.(cmd|path)|sendemail\..*)$", ""),
        (r"^imap\.tunnel$", ""),
        (r"^uploadpack\.packobjectshook$", ""),
        (r"^alias\..+$", ""),
        (r"^core\.fsmonitor$", "false"),
    )
)

# Sections any of those patterns can match: a cheap first test, since a huge config may hold
# tens of thousands of harmless keys.
_NEUTRALIZE_SECTIONS = frozenset({
    "filter", "diff", "merge", "pager", "core", "credential", "gpg", "remote", "interactive",
    "trailer", "hook", "difftool", "mergetool", "web", "browser", "man", "sendemail", "imap",
    "uploadpack", "alias",
})

def config_overrides(found: Iterable[str], *, run_hooks: bool = False,
                     allow_network: bool = False) -> list[tuple[str, str]]:
    """The (key, value) overrides for the repository keys ``found`` plus the fixed set."""
    out: dict[str, tuple[str, str]] = {}
    for key in found:
        section = key.partition(".")[0].lower()
        if section not in _NEUTRALIZE_SECTIONS and section != "protocol":
            continue
        canon = _canonical(key)
        if run_hooks and canon == "core.hookspath":
            continue
        value: str | None
        if canon.startswith("protocol.") and canon.endswith(".allow"):
            # a per-protocol setting beats protocol.allow, so each one must be overridden too
            value = None if allow_network else "never"
        else:
            value = next((v for pattern, v in _NEUTRALIZE if pattern.match(key)), None)
        if value is not None:
            out[canon] = (key, value)
    fixed = list(_FIXED_CONFIG)
    if not run_hooks:
        fixed.append(("core.hooksPath", "/dev/null"))
    if not allow_network:
        fixed.append(("protocol.allow", "never"))
    for key, value in fixed:
        out[_canonical(key)] = (key, value)
    return list(out.values())


def _canonical(key: str) -> str:
    """git's canonical spelling: section and variable lower-cased, subsection kept."""
    first, _, rest = key.partition(".")
    if not rest:
        return key.lower()
    middle, dot, last = rest.rpartition(".")
    return f"{first.lower()}.{middle}{dot}{last.lower()}"
