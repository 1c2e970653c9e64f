"""The toolchains a sandboxed program needs, found where people install them.

The sandbox shows a private, empty home folder, so what lives under the real one (pyenv's
Pythons, uv's, nvm's Node, rustup, cargo, Go, SDKMAN's JDKs) would be gone: a project's
``.venv`` whose ``python`` points into ``~/.pyenv`` could not even start. These are shown
read-only: the usual per-user toolchain roots that exist, the base interpreter of a project's
virtual environment, and the install folder of the program being started when it lives under
home. Answers are cached (a few ``stat`` calls per start at most).
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from app.core.safe_read import read_project_text

__all__ = ["USER_TOOLCHAIN_DIRS", "VENV_NAMES", "program_root", "toolchain_roots",
           "user_toolchains", "venv_bases"]

# Per-user toolchain roots, relative to home. Their credentials (~/.cargo/credentials.toml)
# are on the sensitive list and stay hidden inside them.
USER_TOOLCHAIN_DIRS: tuple[str, ...] = (
    ".pyenv", ".local/share/uv", ".local/bin", ".local/pipx", ".nvm", ".volta", ".cargo",
    ".rustup", "go", ".sdkman", ".bun", ".deno", ".asdf", ".local/share/mise", ".juliaup",
)
# Folder names of a project's virtual environment (never ".env": that is a secrets file).
VENV_NAMES: tuple[str, ...] = (".venv", "venv", ".virtualenv", "virtualenv", "env")

_TTL_S = 30.0
_lock = threading.Lock()
_user_cache: dict[str, tuple[float, tuple[Path, ...]]] = {}
_venv_cache: dict[str, tuple[int, tuple[Path, ...]]] = {}


def user_toolchains(home: Path) -> tuple[Path, ...]:
    """The per-user toolchain roots that exist under ``home`` (resolved), plus ``GOROOT``."""
    key = os.fspath(home)
    now = time.monotonic()
    with _lock:
        hit = _user_cache.get(key)
        if hit is not None and now - hit[0] < _TTL_S:
            return hit[1]
    found: list[Path] = []
    for rel in USER_TOOLCHAIN_DIRS:
        path = home / rel
        if path.is_dir():
            found.append(path.resolve())
    goroot = os.environ.get("GOROOT")
    if goroot and os.path.isabs(goroot) and os.path.isdir(goroot):
        found.append(Path(goroot).resolve())
    else:
        go = shutil.which("go")
        if go:  # .../go/bin/go
            found.append(Path(os.path.realpath(go)).parents[1])
    roots = tuple(dict.fromkeys(found))
    with _lock:
        _user_cache[key] = (now, roots)
    return roots


def venv_bases(folder: Path) -> tuple[Path, ...]:
    """The installs the virtual environments in ``folder`` run from, when they lie outside it:
    ``.venv/bin/python`` is a symlink to a base interpreter (``~/.pyenv/versions/3.12/bin/
    python3.12``), whose prefix must be visible for the venv to start. Cached on the folder's
    mtime (creating a venv changes it)."""
    key = os.fspath(folder)
    try:
        mtime = os.stat(key).st_mtime_ns
    except OSError:
        return ()
    with _lock:
        hit = _venv_cache.get(key)
        if hit is not None and hit[0] == mtime:
            return hit[1]
    found: list[Path] = []
    for name in VENV_NAMES:
        venv = folder / name
        for python in (venv / "bin" / "python", venv / "Scripts" / "python.exe"):
            if not os.path.lexists(python):
                continue
            real = Path(os.path.realpath(python))
            if real.exists() and not real.is_relative_to(folder):
                found.append(real.parents[1])  # <prefix>/bin/python3.x
        home_line = _pyvenv_home(venv / "pyvenv.cfg")
        if home_line is not None and not home_line.is_relative_to(folder):
            found.append(home_line.parent)  # home = <prefix>/bin
    bases = tuple(dict.fromkeys(p for p in found if p != Path("/")))
    with _lock:
        _venv_cache[key] = (mtime, bases)
    return bases


def _pyvenv_home(cfg: Path) -> Path | None:
    try:
        text = read_project_text(cfg)  # the project's venv: a FIFO must not block
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip().lower() == "home" and os.path.isabs(value.strip()):
            path = Path(value.strip())
            return path.resolve() if path.exists() else None
    return None


def program_root(executable: str, home: Path) -> Path | None:
    """The install folder of a program that lives under ``home`` (``~/tools/x/bin/x`` →
    ``~/tools/x``), never home itself; None for a program elsewhere."""
    real = Path(os.path.realpath(executable))
    if not real.is_relative_to(home) or real == home:
        return None
    folder = real.parent
    if folder.name == "bin" and folder.parent != home:
        folder = folder.parent
    return folder if folder != home else None


def toolchain_roots(home: Path, folders: Iterable[Path], executable: str | None) -> tuple[
        Path, ...]:
    """Everything above for one program start: the user toolchains, the base interpreters of
    the venvs in ``folders`` (the project and write folders), the program's install root."""
    out = list(user_toolchains(home))
    for folder in folders:
        out += venv_bases(folder)
    if executable:
        root = program_root(executable, home)
        if root is not None:
            out.append(root)
    return tuple(dict.fromkeys(out))
