"""Finding rg and fd for the CLI provider: where they are, which version, what to install.

Separate from the provider (``providers.cli``) because detection runs programs on its own schedule:
the first detection's ``--version`` probes start at start-up (``app.startup_threads`` calls
``probe_versions_early`` in a thread of its own), long before the provider or its tools are
imported, so this module imports nothing of the tools.

Detection only trusts absolute PATH entries (a relative one would let the project plant a
program), looks for each program under configurable names or absolute paths (Debian installs fd
as ``fdfind``), and checks that the version is new enough for the flags the tools use.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.core.tools.process_runner import minimal_env

__all__ = [
    "DEFAULT_ALIASES",
    "MIN_VERSIONS",
    "PROGRAM_INFO",
    "TOOL_PROGRAMS",
    "DetectedProgram",
    "detect_program",
    "end_early_probes",
    "install_hint",
    "normalise_aliases",
    "probe_versions_early",
]

# Program → names (or absolute paths) tried in order. Debian/Ubuntu ship fd as `fdfind`.
DEFAULT_ALIASES: Mapping[str, tuple[str, ...]] = {"rg": ("rg",), "fd": ("fd", "fdfind")}
# Which program serves which tool; also accepted as alias keys.
TOOL_PROGRAMS: Mapping[str, str] = {"grep_search": "rg", "glob_search": "fd"}
# rg: the built-in argv uses --no-ignore-exclude (12.0). fd: --strip-cwd-prefix (8.3).
MIN_VERSIONS: Mapping[str, tuple[int, ...]] = {"rg": (12, 0), "fd": (8, 3)}
# Program → (its name for people, the tool it serves).
PROGRAM_INFO: Mapping[str, tuple[str, str]] = {
    "rg": ("ripgrep", "grep_search"),
    "fd": ("fd", "glob_search"),
}
_VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class DetectedProgram:
    """What detection found for one program; ``path`` is None when it is unusable."""

    program: str  # "rg" or "fd"
    path: str | None
    version: tuple[int, ...] | None = None
    tried: tuple[str, ...] = ()
    problem: str | None = None  # why a found binary is not used (too old, --version failed)


def install_hint(program: str, platform: str) -> str:
    """How to install ``program`` ("rg" or "fd") on ``platform`` (a ``sys.platform`` value)."""
    if platform.startswith("linux"):
        return {"rg": "apt install ripgrep",
                "fd": "apt install fd-find (installed as fdfind, which is found too)"}[program]
    if platform == "darwin":
        return {"rg": "brew install ripgrep", "fd": "brew install fd"}[program]
    if platform.startswith("win"):
        return {"rg": "winget install BurntSushi.ripgrep.MSVC",
                "fd": "winget install sharkdp.fd"}[program]
    return {"rg": "install ripgrep from your package manager",
            "fd": "install fd from your package manager"}[program]


def normalise_aliases(aliases: Mapping[str, str | Sequence[str]] | None
                      ) -> dict[str, tuple[str, ...]]:
    """The defaults overridden by ``aliases`` (keyed by program or tool name); ValueError on a
    bad key or an empty name list."""
    merged = {k: tuple(v) for k, v in DEFAULT_ALIASES.items()}
    for key, value in (aliases or {}).items():
        program = TOOL_PROGRAMS.get(key, key)
        if program not in merged:
            raise ValueError(f"unknown CLI alias key {key!r}; use one of "
                             f"{', '.join([*DEFAULT_ALIASES, *TOOL_PROGRAMS])}")
        names = (value,) if isinstance(value, str) else tuple(value)
        if not names or not all(isinstance(n, str) and n.strip() for n in names):
            raise ValueError(f"CLI alias {key!r} needs one or more program names or paths")
        merged[program] = names
    return merged


def _search_path(path_var: str) -> str:
    # Only absolute PATH entries: a relative one would let the project plant a program.
    return os.pathsep.join(e for e in path_var.split(os.pathsep) if os.path.isabs(e))


def _locate(name: str, path_var: str) -> str | None:
    """The program ``name`` (a name looked up in ``path_var``, or an absolute path)."""
    if os.path.isabs(name):
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    if os.sep in name or "/" in name:
        return None  # a relative path would depend on the working directory
    return shutil.which(name, path=path_var)


def _probe_version(path: str) -> tuple[tuple[int, ...] | None, str | None]:
    try:
        done = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=5, env=minimal_env(), check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{path} --version failed: {exc}"
    m = _VERSION_RE.search(done.stdout.decode("utf-8", "replace"))
    if done.returncode != 0 or m is None:
        return None, f"{path} --version did not print a version"
    return tuple(int(g) for g in m.groups() if g is not None), None


def detect_program(program: str, names: tuple[str, ...],
                   search_path: str | None = None) -> DetectedProgram:
    """The first of ``names`` that is found (on ``search_path``, else the minimal
    environment's PATH) and new enough for the tools; a ``DetectedProgram`` without a path,
    saying why, when none is."""
    path_var = _search_path(search_path if search_path is not None
                            else minimal_env()["PATH"])
    problem = None
    for name in names:
        found = _locate(name, path_var)
        if found is None:
            continue
        version, problem = _take_early_probe(found) or _probe_version(found)
        minimum = MIN_VERSIONS[program]
        if version is not None and version < minimum:
            problem = (f"{found} is version {'.'.join(map(str, version))}; "
                       f"{'.'.join(map(str, minimum))} or newer is needed")
            continue
        if version is None:
            continue
        return DetectedProgram(program, found, version, names)
    return DetectedProgram(program, None, None, names, problem)


# -- the first detection's probes, started early (app.startup_threads) ---------------------------

class _EarlyProbe:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: tuple[tuple[int, ...] | None, str | None] | None = None  # None: failed


_early_lock = threading.Lock()
_early_probes: dict[str, _EarlyProbe] = {}  # program path → its --version probe
_early_closed = False  # set by the first detection: later ones always probe afresh


def probe_versions_early() -> None:
    """Run the ``--version`` probes the first detection will need (the default names on the
    default search path), now. app.startup_threads calls this in a thread of its own at
    start-up, so the programs run (~10 ms of waiting) while the services are imported; the first
    ``CliProvider.detect()`` takes these answers, waiting for one still running, instead of
    running the programs again. Later detections (``reload()``) always probe afresh."""
    path_var = _search_path(minimal_env()["PATH"])
    for program, names in DEFAULT_ALIASES.items():
        for name in names:
            found = _locate(name, path_var)
            if found is None:
                continue
            with _early_lock:
                if _early_closed or found in _early_probes:
                    return
                probe = _early_probes[found] = _EarlyProbe()
            try:
                probe.result = _probe_version(found)
            finally:
                probe.done.set()  # on an error without a result: the detection probes itself
            version = probe.result[0]
            if version is not None and version >= MIN_VERSIONS[program]:
                break  # detection stops at the first usable one too


def _take_early_probe(path: str) -> tuple[tuple[int, ...] | None, str | None] | None:
    with _early_lock:
        probe = _early_probes.pop(path, None)
    if probe is None or not probe.done.wait(timeout=10):
        return None
    return probe.result  # None when the early probe failed


def end_early_probes() -> None:
    """No more early probes: later detections run their own (the first detection calls this;
    app.startup_threads does too, so answers it did not use are never taken later)."""
    global _early_closed
    with _early_lock:
        _early_closed = True
        _early_probes.clear()
