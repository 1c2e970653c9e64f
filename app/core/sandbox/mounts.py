"""What a sandboxed program sees, and why: the allowlist as a list of mounts.

The sandbox starts from nothing (bubblewrap's empty root) and shows, in this order of depth
(a deeper mount lands on top of a shallower one, so the order is the path's depth):

- the system folders read-only (``/usr``, ``/etc`` minus its secrets, ``/opt``; ``/bin`` and
  friends recreated as the symlinks they are), a fresh ``/dev`` and ``/proc``, an empty
  private ``/tmp``;
- an empty private home at the home path, holding only a git identity Tebiki wrote;
- Tebiki's own runtime and the toolchains the program needs, read-only (``toolchains``);
- the write folders, and the policy's read-only folders (the project of a read-only tool,
  ``.git`` inside a writable project, the person's own additions);
- on top: every secret inside what is visible hidden (the sensitive list, files with a
  secret's name, special files such as sockets and FIFOs; an empty folder or ``/dev/null``
  in their place) unless the person revealed it to this call, and the hard-linked files of
  the write folders read-only.

The same plan writes bubblewrap's command line, the environment's "visible tree", the note
for a failure that names an unseen path, and the Settings → Sandbox listing.
"""

from __future__ import annotations

import functools
import glob
import os
import sys
import tempfile
import threading
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from app.core.safe_read import read_project_text
from app.core.sandbox.policy import SandboxPolicy
from app.core.sandbox.scanner import TreeFindings, TreeScanner, same_files
from app.core.sandbox.toolchains import toolchain_roots

__all__ = ["Access", "Mount", "MountPlan", "own_runtime", "plan_mounts", "scanner_for",
           "system_mounts"]

SYSTEM_FOLDERS: tuple[str, ...] = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                   "/libx32", "/etc", "/opt", "/nix", "/snap")
# Secrets of the system folders: password hashes, sudo rules, the host's private keys.
ETC_SECRETS: tuple[str, ...] = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
    "/etc/sudoers.d", "/etc/ssh/ssh_host_*_key", "/etc/security/opasswd", "/etc/ssl/private",
    "/etc/krb5.keytab", "/etc/NetworkManager/system-connections", "/etc/wireguard",
)
# More hard-linked files than this in one folder: the folder is mounted read-only instead.
HARD_LINKS_PER_FOLDER = 16
GIT_IDENTITY = "[user]\n\tname = Tebiki agent\n\temail = agent@tebiki.invalid\n"


class Access(StrEnum):
    READ_ONLY = "read-only"
    WRITABLE = "writable"
    HIDDEN = "hidden"
    EMPTY = "empty"  # a fresh tmpfs: the private /tmp and home
    SYSTEM = "system"  # /dev, /proc
    SYMLINK = "symlink"


@dataclass(frozen=True)
class Mount:
    path: Path
    access: Access
    reason: str
    source: Path | None = None  # a bind's source, or a symlink's target, when not ``path``
    folder: bool = True


# Precedence at one path: a later rank replaces an earlier mount there.
_RANK = {"system": 0, "home": 1, "toolchain": 2, "writable": 3, "read-only": 4, "hidden": 5,
         "revealed": 6}


@dataclass(frozen=True)
class MountPlan:
    mounts: tuple[Mount, ...]
    home: Path | None  # the private home (None when the person's home itself is visible)
    notes: tuple[str, ...] = ()

    @functools.cached_property
    def roots(self) -> tuple[Path, ...]:
        """Where a path may point and still be seen (for the environment's filter)."""
        return tuple(m.path for m in self.mounts if m.access is not Access.HIDDEN)

    def access_of(self, path: Path) -> Mount | None:
        """The mount that decides what the program sees at ``path`` (the deepest one at or
        above it), or None when nothing shows it."""
        best: Mount | None = None
        for mount in self.mounts:
            if (path == mount.path or path.is_relative_to(mount.path)) and (
                    best is None or len(mount.path.parts) >= len(best.path.parts)):
                best = mount
        if best is not None and best.access is Access.EMPTY and path != best.path:
            return Mount(best.path, Access.HIDDEN, best.reason)  # an empty folder shows nothing
        return best

    def sees(self, path: Path) -> bool:
        mount = self.access_of(path)
        return mount is not None and mount.access is not Access.HIDDEN


def _real(path: Path) -> Path | None:
    """The resolved path, or None when nothing is there."""
    if not os.path.lexists(path):
        return None
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None


def _within(path: Path, roots: list[Path] | tuple[Path, ...]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


@functools.cache
def own_runtime() -> tuple[Path, ...]:
    """Tebiki's interpreter, its environment and its code: programs run them (self_eval and
    custom tools may call the same Python, MCP servers run from the install)."""
    app_root = Path(__file__).resolve().parents[3]  # the folder that holds the app package
    candidates: set[str] = {sys.prefix, sys.base_prefix, sys.exec_prefix,
                            os.path.dirname(os.path.realpath(sys.executable)), str(app_root)}
    return tuple(sorted(Path(c).resolve() for c in candidates if c))


@functools.cache
def system_mounts() -> tuple[Mount, ...]:
    out: list[Mount] = []
    for name in SYSTEM_FOLDERS:
        path = Path(name)
        if path.is_symlink():
            out.append(Mount(path, Access.SYMLINK, "system folder (a symlink)",
                             Path(os.readlink(path))))
        elif path.is_dir():
            out.append(Mount(path, Access.READ_ONLY, "system folder"))
    out += [Mount(Path("/dev"), Access.SYSTEM, "fresh devices"),
            Mount(Path("/proc"), Access.SYSTEM, "the sandbox's own processes"),
            Mount(Path("/tmp"), Access.EMPTY, "private temporary folder")]
    for pattern in ETC_SECRETS:
        for found in sorted(glob.glob(pattern)):
            path = Path(found)
            out.append(Mount(path, Access.HIDDEN, "system secret", folder=path.is_dir()))
    return tuple(out)


_identity_lock = threading.Lock()
_identity_dir: Path | None = None


def generated_gitconfig() -> Path:
    """The ``.gitconfig`` of the private home: an identity, nothing that runs a program."""
    global _identity_dir
    with _identity_lock:
        if _identity_dir is None or not (_identity_dir / ".gitconfig").is_file():
            _identity_dir = Path(tempfile.mkdtemp(prefix="tebiki-sandbox-home-"))
            (_identity_dir / ".gitconfig").write_text(GIT_IDENTITY, encoding="utf-8")
        return _identity_dir / ".gitconfig"


_scanners: dict[tuple[str, ...], TreeScanner] = {}


def scanner_for(names: tuple[str, ...]) -> TreeScanner:
    """The shared scanner for a set of extra secret names (one cache per set)."""
    from app.core.sensitive_paths import SensitivePaths

    with _identity_lock:
        scanner = _scanners.get(names)
        if scanner is None:
            scanner = _scanners[names] = TreeScanner(SensitivePaths(names=names).name_is_secret)
        return scanner


class _Planner:
    """Collects mounts with their precedence and the depth order."""

    def __init__(self) -> None:
        self.by_path: dict[Path, tuple[int, Mount]] = {}
        self.notes: list[str] = []

    def add(self, mount: Mount, rank: str) -> None:
        held = self.by_path.get(mount.path)
        if held is None or _RANK[rank] >= held[0]:
            self.by_path[mount.path] = (_RANK[rank], mount)

    def mounts(self) -> tuple[Mount, ...]:
        ordered = [m for _, m in sorted(self.by_path.values(),
                                        key=lambda item: len(item[1].path.parts))]
        return tuple(m for m in ordered if not self._already_hidden(m, ordered))

    @staticmethod
    def _already_hidden(mount: Mount, ordered: list[Mount]) -> bool:
        """A hidden path inside a hidden folder, with nothing shown in between: redundant
        (and a mount point in an empty folder would show that something is there)."""
        if mount.access is not Access.HIDDEN:
            return False
        above = [m for m in ordered if m.path != mount.path and mount.path.is_relative_to(m.path)]
        deepest = max(above, key=lambda m: len(m.path.parts), default=None)
        return deepest is not None and deepest.access is Access.HIDDEN


def _hard_link_mounts(files: tuple[Path, ...], root: Path, planner: _Planner) -> None:
    by_folder: dict[Path, list[Path]] = {}
    for path in files:
        by_folder.setdefault(path.parent, []).append(path)
    for folder, inside in by_folder.items():
        if len(inside) > HARD_LINKS_PER_FOLDER:
            planner.add(Mount(folder, Access.READ_ONLY,
                              f"{len(inside)} hard-linked files: the whole folder is read-only"),
                        "read-only")
            planner.notes.append(f"{folder} is read-only: it holds {len(inside)} hard-linked "
                                 "files, whose twins may lie outside the write folders")
            continue
        for path in inside:
            planner.add(Mount(path, Access.READ_ONLY,
                              "hard-linked: writing it would change its twin", folder=False),
                        "read-only")


def worktree_git_dirs(folder: Path) -> list[Path]:
    """Where the repository of a linked worktree lives (its ``.git`` is a file naming it):
    git in the worktree reads it, so it is shown read-only like the project's own ``.git``."""
    try:
        text = read_project_text(folder / ".git")  # a FIFO there must not block
    except OSError:  # none, or a folder
        return []
    if not text.startswith("gitdir:"):
        return []
    gitdir = Path(folder, text[len("gitdir:"):].strip().splitlines()[0]).resolve()
    found = [gitdir]
    try:
        common = read_project_text(gitdir / "commondir").strip()
        found.append((gitdir / common).resolve())
    except OSError:
        pass
    return [p for p in found if p.is_dir()]


@dataclass(frozen=True)
class _GivenFolders:
    """The policy's folders, resolved: what no longer exists is left out, duplicates once."""

    writable: list[Path]
    read_only: list[Path]  # the policy's, the shared ones, the repositories of linked worktrees
    shared: list[Path]  # added in Settings → Sandbox
    revealed: list[Path]
    given: list[Path]  # writable + read_only

    @classmethod
    def of(cls, policy: SandboxPolicy) -> _GivenFolders:
        writable = list(dict.fromkeys(p for p in map(_real, policy.writable)
                                      if p is not None and p.is_dir()))
        read_only = list(dict.fromkeys(p for p in map(_real, policy.read_only) if p is not None))
        shared = [p for p in map(_real, policy.shared_read_only)
                  if p is not None and p not in read_only]
        read_only += shared
        revealed = [p for p in map(_real, policy.revealed) if p is not None]
        given = writable + read_only
        for folder in [p for p in given if p.is_dir()]:
            read_only += [p for p in worktree_git_dirs(folder) if not _within(p, given)]
        return cls(writable, read_only, shared, revealed, writable + read_only)


def _add_given(planner: _Planner, folders: _GivenFolders) -> None:
    for path in folders.writable:
        planner.add(Mount(path, Access.WRITABLE, "write folder"), "writable")
    for path in folders.read_only:
        reason = ("added in Settings → Sandbox" if path in folders.shared
                  else "read-only folder of this tool")
        planner.add(Mount(path, Access.READ_ONLY, reason, folder=path.is_dir()), "read-only")


def _add_installs(planner: _Planner, home: Path | None, given: list[Path],
                  system_roots: list[Path], executable: str | None) -> list[Path]:
    """Tebiki's runtime and the toolchains, read-only, where nothing shallower shows them
    already; returns the ones mounted."""
    installs: list[tuple[Path, str]] = [(p, "Tebiki's own runtime") for p in own_runtime()]
    if home is not None:
        folders = [p for p in given if p.is_dir()]
        installs += [(p, "toolchain") for p in toolchain_roots(home, folders, executable)]
    shown: list[Path] = []
    for path, reason in sorted(installs, key=lambda item: len(item[0].parts)):
        if path.exists() and not _within(path, [*system_roots, *given, *shown]):
            shown.append(path)
            planner.add(Mount(path, Access.READ_ONLY, reason), "toolchain")
    return shown


def _add_private_home(planner: _Planner, home: Path | None, given: list[Path]) -> Path | None:
    """An empty home with the sandbox's git identity, unless a given folder shows the home
    (or it is /); returns it."""
    if home is None or home == Path("/") or _within(home, given):
        return None
    planner.add(Mount(home, Access.EMPTY, "private, empty home"), "home")
    planner.add(Mount(home / ".gitconfig", Access.READ_ONLY, "git identity of the sandbox",
                      generated_gitconfig(), folder=False), "home")
    return home


class _Hider:
    """Hides secrets inside what the program sees (``shown``), except what the person revealed
    to this call; keeps the hidden folders (a revealed path inside one is mounted again)."""

    def __init__(self, planner: _Planner, shown: list[Path], revealed: list[Path]) -> None:
        self.planner, self.shown, self.revealed = planner, shown, revealed
        self.hidden_folders: list[Path] = []

    def hide(self, path: Path, reason: str) -> None:
        if _within(path, self.revealed) or not _within(path, self.shown):
            return
        is_dir = path.is_dir() and not path.is_symlink()
        if is_dir:
            self.hidden_folders.append(path)
        self.planner.add(Mount(path, Access.HIDDEN, reason, folder=is_dir), "hidden")

    def hide_listed(self, entries: tuple[Path, ...]) -> None:
        for entry in entries:
            real = _real(entry)
            if real is not None and real != Path("/"):
                self.hide(real, "on the sensitive list")

    def hide_found(self, found: TreeFindings) -> None:
        for path in (*found.secret_files, *found.secret_folders):
            self.hide(path, "a secret's name")
        for path in found.secret_twins:
            self.hide(path, "a hard link of a secret")
        for path in found.special_files:
            self.hide(path, "a special file (a socket, FIFO or device: a door to another "
                            "program, or a read that never ends)")


def _add_revealed(planner: _Planner, hider: _Hider) -> None:
    """A revealed path that nothing shows, or that lies in a hidden folder, is mounted."""
    for path in hider.revealed:
        if not _within(path, hider.shown) or _within(path, hider.hidden_folders):
            planner.add(Mount(path, Access.READ_ONLY, "revealed to this call by the person",
                              folder=path.is_dir()), "revealed")


def _add_name_resolution(planner: _Planner, shown: list[Path]) -> None:
    resolv = _real(Path("/etc/resolv.conf"))
    if resolv is not None and not _within(resolv, shown):
        planner.add(Mount(resolv, Access.READ_ONLY, "name resolution (network is on)",
                          folder=False), "toolchain")


def plan_mounts(policy: SandboxPolicy, *, executable: str | None = None,
                scanner: TreeScanner | None = None) -> MountPlan:
    """The mounts of one program start (see the module docstring)."""
    scanner = scanner or scanner_for(policy.secret_names)
    planner = _Planner()
    for mount in system_mounts():
        planner.add(mount, "hidden" if mount.access is Access.HIDDEN else "system")
    system_roots = [m.path for m in system_mounts() if m.access is Access.READ_ONLY]
    home = _real(policy.home or Path(os.path.expanduser("~")))
    folders = _GivenFolders.of(policy)
    _add_given(planner, folders)
    installs = _add_installs(planner, home, folders.given, system_roots, executable)
    private_home = _add_private_home(planner, home, folders.given)
    hider = _Hider(planner, [*system_roots, *folders.given, *installs], folders.revealed)
    hider.hide_listed(policy.hidden)
    # The folders given to this program are walked for secrets by name, special files and hard
    # links; the toolchains and the runtime are installs (their *.pem are CA bundles and test
    # keys), where only the sensitive list above applies.
    for root in folders.given:
        if not root.is_dir():
            continue
        found = scanner.scan(root)
        hider.hide_found(found)
        for twin in same_files(found.person_links(), policy.hidden):
            hider.hide(twin, "a hard link of a file on the sensitive list")
        if root in folders.writable:
            links = tuple(p for p in found.hard_links if not _within(p, folders.read_only))
            _hard_link_mounts(links, root, planner)
    _add_revealed(planner, hider)
    if policy.network:
        _add_name_resolution(planner, hider.shown)
    return MountPlan(planner.mounts(), private_home, tuple(planner.notes))
