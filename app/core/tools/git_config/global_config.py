"""The controlled global config: the one global git config Tebiki's git commands read,
holding only identity and format settings copied from the person's own."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.core.tools.git_config.files import Stamp, stamp
from app.core.tools.git_config.reader import SCAN_TIMEOUT_S, Deadline, read_tokens

# Settings copied from the person's own global config into the one Tebiki writes: who they
# are and how text is stored, nothing that names a program.
_GLOBAL_SAFE_KEYS = frozenset({
    "user.name", "user.email", "author.name", "author.email", "committer.name",
    "committer.email", "core.autocrlf", "core.eol", "core.safecrlf", "core.quotepath",
    "core.excludesfile", "init.defaultbranch", "safe.directory", "i18n.commitencoding",
    "i18n.logoutputencoding", "merge.conflictstyle", "diff.algorithm", "pull.rebase", "pull.ff",
})

_state_dir: Path | None = None


def _private_dir() -> Path:
    global _state_dir
    if _state_dir is None or not _state_dir.is_dir():
        # mkdtemp: a fresh 0700 folder no other user can have prepared
        _state_dir = Path(tempfile.mkdtemp(prefix="tebiki-git-"))
        atexit.register(shutil.rmtree, _state_dir, True)
    return _state_dir

def private_state_dir() -> Path:
    """The private folder holding the controlled global git config: a sandboxed git must be
    able to read it, so the sandbox keeps it visible (read-only)."""
    return _private_dir()


@dataclass
class _Global:
    key: tuple[object, ...]
    path: Path
    stamp: Stamp


_global: _Global | None = None


# Who the app's own commits (git_ops commit) are by when the person has set no identity: without
# one git refuses to commit ("Please tell me who you are"). The repository's own user.* settings
# and the person's global ones win over it (this is the lowest-precedence global file).
FALLBACK_NAME = "Tebiki"
FALLBACK_EMAIL = "tebiki@localhost"


def fallback_identity(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    keys = {key for key, _value in pairs}
    return [(key, value) for key, value in (("user.name", FALLBACK_NAME),
                                            ("user.email", FALLBACK_EMAIL)) if key not in keys]


async def controlled_global(git: str, base_env: Mapping[str, str]) -> str:
    """The path of the global config Tebiki wrote; rewritten when the source or it changed."""
    global _global
    home = base_env.get("HOME", "")
    xdg = base_env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
    sources = [Path(home, ".gitconfig")] if home else []
    if xdg:
        sources.append(Path(xdg, "git", "config"))
    key = (home, xdg, tuple(stamp(p) for p in sources))
    if _global is not None and _global.key == key and stamp(_global.path) == _global.stamp \
            and _global.stamp is not None:
        return str(_global.path)
    folder = _private_dir()
    env = {k: v for k, v in base_env.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    pairs: list[tuple[str, str]] = []
    if home:
        # --includes: identities often live in an included file; reading files runs nothing.
        # cwd is our private folder so no repository is discovered.
        code, tokens = await read_tokens(
            [git, "config", "--global", "--includes", "--list", "-z"], cwd=folder, env=env,
            deadline=Deadline(SCAN_TIMEOUT_S),
            keep_value=lambda key: key.lower() in _GLOBAL_SAFE_KEYS)
        if code == 0:
            pairs = [(key.lower(), value) for key, value in tokens
                     if value is not None and key.lower() in _GLOBAL_SAFE_KEYS]
    pairs += fallback_identity(pairs)
    path = _write_global(folder, pairs)
    _global = _Global(key, path, stamp(path))
    return str(path)


def _quote(value: str) -> str:
    escaped = (value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
               .replace("\t", "\\t").replace("\b", "\\b"))
    return f'"{escaped}"'


def _write_global(folder: Path, pairs: list[tuple[str, str]]) -> Path:
    lines = ["# Written by Tebiki: the only global git config its git commands read.",
             "[color]", "\tui = false"]
    section = "color"
    for key, value in sorted(pairs, key=lambda kv: kv[0].split(".", 1)[0]):
        name, _, var = key.partition(".")
        if name != section:
            lines.append(f"[{name}]")
            section = name
        lines.append(f"\t{var} = {_quote(value)}")
    content = ("\n".join(lines) + "\n").encode("utf-8")
    path = folder / f"global-{hashlib.sha256(content).hexdigest()[:16]}.gitconfig"
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".global-")
    with os.fdopen(fd, "wb") as handle:
        handle.write(content)
    os.replace(tmp, path)
    return path
