"""The project's instructions for the model: ``AGENTS.md``, ``CLAUDE.md`` and
``.tebiki/instructions.md`` from the project folder, after the person's own
``instructions.md`` from Tebiki's data folder, the files other agents (Claude Code, Codex,
Gemini CLI, Cursor, Goose) read too.

A project's files are someone else's content: each is read through
app.core.safe_read (never blocking on a FIFO or a device, bounded), a symlink that leads out
of the project is not followed, bad UTF-8 is replaced, and each file and all of them together
are capped (``MAX_FILE_BYTES``, ``MAX_TOTAL_BYTES``; what was cut says so). They are text in the
system prompt only (app.core.agent.system_prompt fences them): they never change a permission.

``InstructionsLoader.load`` is called at every run start, off the event loop: it stats each
file and reads it again only when its (path, mtime_ns, size) changed.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from app.core.safe_read import UnsafeReadError, read_project_file

MAX_FILE_BYTES = 32 * 1024
MAX_TOTAL_BYTES = 64 * 1024
# In the order they go into the prompt (after the personal file).
PROJECT_FILES = ("AGENTS.md", "CLAUDE.md", ".tebiki/instructions.md")
PERSONAL_FILE = "instructions.md"


def personal_instructions_path(data_dir: Path) -> Path:
    """The person's own instructions for every project: ``<data folder>/instructions.md``."""
    return data_dir / PERSONAL_FILE


@dataclass(frozen=True)
class InstructionFile:
    """One instructions file found: ``name`` as shown ("AGENTS.md", or "instructions.md"
    for the ``personal`` one), ``path`` where it is, ``size`` its bytes on disk. ``text`` is
    what goes into the prompt; ``cut_at`` the byte limit it was cut at (None: whole), and
    ``cut_reason`` why. ``problem``: why it was not read at all ("" when it was)."""

    name: str
    path: Path
    size: int
    text: str
    personal: bool = False
    cut_at: int | None = None
    cut_reason: str = ""
    problem: str = ""

    @property
    def included(self) -> bool:
        """Whether any of its text goes into the prompt."""
        return not self.problem and bool(self.text.strip())


_Key = tuple[str, int, int]


class InstructionsLoader:
    """Loads the instructions for a project; ``personal`` is the person's own file (None:
    none). Keeps what it read keyed by (path, mtime_ns, size), so an unchanged file is not
    read again. Safe to call from a worker thread."""

    def __init__(self, personal: Path | None = None, *, max_file_bytes: int = MAX_FILE_BYTES,
                 max_total_bytes: int = MAX_TOTAL_BYTES) -> None:
        self.personal = personal
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self._read: dict[str, tuple[_Key, InstructionFile]] = {}
        self._lock = threading.Lock()

    def load(self, project_root: Path) -> tuple[InstructionFile, ...]:
        """The files found, in prompt order (the personal one, then ``PROJECT_FILES``),
        each capped and all of them within the total. Never raises for a file's content."""
        root = Path(project_root).resolve()
        found: list[InstructionFile] = []
        seen: set[Path] = set()  # CLAUDE.md is often a symlink to AGENTS.md: once is enough
        if self.personal is not None:
            personal = self._file(PERSONAL_FILE, Path(self.personal), None, personal=True)
            if personal is not None:
                found.append(personal)
        for name in PROJECT_FILES:
            path = root / name
            resolved = _resolved(path)
            if resolved is None or resolved in seen:
                continue
            seen.add(resolved)
            loaded = self._file(name, path, root)
            if loaded is not None:
                found.append(loaded)
        return tuple(self._within_total(found))

    def _file(self, name: str, path: Path, root: Path | None, *,
              personal: bool = False) -> InstructionFile | None:
        """``path`` read (or from the cache), None when there is no such file; ``root``: the
        folder a symlink must not lead out of."""
        target = _resolved(path)
        if target is None:
            return None
        if root is not None and not target.is_relative_to(root):
            return InstructionFile(name, path, 0, "", personal,
                                   problem="a link to outside the project; not followed")
        try:
            st = os.stat(target)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return InstructionFile(name, path, 0, "", personal, problem="not a regular file")
        key = (str(target), st.st_mtime_ns, st.st_size)
        with self._lock:
            cached = self._read.get(str(path))
        if cached is not None and cached[0] == key:
            return cached[1]
        loaded = self._read_file(name, path, target, st.st_size, personal)
        with self._lock:
            self._read[str(path)] = (key, loaded)
        return loaded

    def _read_file(self, name: str, path: Path, target: Path, size: int,
                   personal: bool) -> InstructionFile:
        cap = self.max_file_bytes
        try:
            # The resolved target, not followed again: a link swapped in meanwhile is refused.
            data = read_project_file(target, max_bytes=cap + 1, follow_symlinks=False,
                                     too_large="truncate")
        except UnsafeReadError as exc:
            return InstructionFile(name, path, size, "", personal, problem=_problem(exc))
        if len(data) <= cap:
            return InstructionFile(name, path, size, _decoded(data), personal)
        return InstructionFile(name, path, max(size, len(data)), _decoded(data[:cap], cut=True),
                               personal, cut_at=cap,
                               cut_reason=f"the file is larger than {describe_size(cap)}")

    def _within_total(self, files: list[InstructionFile]) -> list[InstructionFile]:
        """``files`` with the later ones cut (or left out) once ``max_total_bytes`` is used."""
        left = self.max_total_bytes
        kept: list[InstructionFile] = []
        for file in files:
            encoded = file.text.encode("utf-8")
            if len(encoded) > left:
                file = replace(file, text=_decoded(encoded[:left], cut=True), cut_at=left,
                               cut_reason="all instructions together are limited to "
                                          f"{describe_size(self.max_total_bytes)}")
            left -= len(file.text.encode("utf-8"))
            kept.append(file)
        return kept


def _resolved(path: Path) -> Path | None:
    """Where ``path`` leads (symlinks followed), or None when nothing is there."""
    try:
        if not os.path.lexists(path):
            return None
        return path.resolve(strict=True)
    except (OSError, RuntimeError):  # a dangling link, a loop
        return None


def _decoded(data: bytes, *, cut: bool = False) -> str:
    text = data.decode("utf-8", "replace")
    # A character split by the cut is dropped rather than shown as "\ufffd".
    return text.rstrip("\ufffd") if cut else text


def _problem(exc: UnsafeReadError) -> str:
    """Why a file was not read, without its path (the panel names the file)."""
    if isinstance(exc.errno, int) and exc.errno:
        return f"cannot be read ({os.strerror(exc.errno).lower()})"
    return "cannot be read"


def describe_size(n: int) -> str:
    """A size for a person: "812 bytes", "2.1 KB", "1.4 MB"."""
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB".replace(".0 KB", " KB")
    return f"{n / (1024 * 1024):.1f} MB".replace(".0 MB", " MB")


def describe(file: InstructionFile) -> str:
    """How the panel names a file: "AGENTS.md (2.1 KB)", "CLAUDE.md (cut at 32 KB)",
    "AGENTS.md (not read: not a regular file)"."""
    name = f"personal {file.name}" if file.personal else file.name
    if file.problem:
        return f"{name} (not read: {file.problem})"
    if file.cut_at == 0:
        return f"{name} (left out: {file.cut_reason})"
    if file.cut_at is not None:
        return f"{name} (cut at {describe_size(file.cut_at)})"
    return f"{name} ({describe_size(file.size)})"
