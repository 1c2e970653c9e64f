"""The git plumbing of the checkpoint engine: one shadow repository per project folder.

The shadow is a bare repository in Tebiki's data folder whose work tree is the project folder
and whose index is its own (``<shadow>/index``). Every git started here gets ``GIT_DIR``,
``GIT_WORK_TREE`` and ``GIT_INDEX_FILE`` pointing at it, so the project's own ``.git`` (index,
refs, stash, config, hooks, objects) is never read or written; git never descends into a
``.git`` entry of the work tree either.

Git is run without a shell (argv lists), without stdin, with a timeout, in the C locale, with
no system or global configuration, and every listing is read with ``-z``. The shadow's own
config is written by :meth:`ShadowRepo.initialize` and also repeated in the environment for
the settings that could run a program (hooks, fsmonitor).
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from app.core.checkpoints.blob_reader import BlobReader, CheckpointError
from app.core.checkpoints.index_file import write_atomically, write_object
from app.core.checkpoints.pack_writer import STORED_LEVEL, index_bytes, write_pack

__all__ = ["CheckpointError", "ShadowRepo", "Status", "TreeEntry"]

GIT_TIMEOUT_S = 120.0
BULK_TIMEOUT_S = 1800.0  # hashing a whole large project, or a gc

AUTHOR = ("Tebiki", "tebiki@localhost")

# Every file exactly as its bytes: no line-ending or encoding conversion, no filters, no ident
# expansion, whatever the project's .gitattributes say (info/attributes has the highest
# precedence). `diff` is left *unspecified* rather than unset: `-diff` would make every file
# "binary" in diffs; unspecified lets git detect binary content, and no diff driver can run
# because the only configuration git reads is the shadow's own.
ATTRIBUTES = b"* -text -eol -filter -merge -ident -working-tree-encoding !diff\n"

BUILTIN_EXCLUDES = (
    ".git", ".venv/", "venv/", "node_modules/", "__pycache__/", ".tox/", ".mypy_cache/",
    ".pytest_cache/", ".ruff_cache/", "dist/", "build/", "target/", ".DS_Store",
)

_CONFIG = f"""[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tignorecase = false
\tprecomposeunicode = false
\tautocrlf = false
\tsafecrlf = false
\tfsmonitor = false
\thooksPath = {os.devnull}
\texcludesFile = {os.devnull}
\tattributesFile = {os.devnull}
\tuntrackedCache = true
\tpreloadIndex = true
\tlogAllRefUpdates = false
\tquotePath = false
\tlooseCompression = 1
\tfsync = none
\tsplitIndex = true
[index]
\tversion = 4
[gc]
\tauto = 0
\tautoDetach = false
[advice]
\taddEmbeddedRepo = false
\tdetachedHead = false
[commit]
\tgpgSign = false
"""

# Also in the environment ("command" scope beats every config file): the settings through
# which git could start a program.
_ENV_CONFIG = (("core.hooksPath", os.devnull), ("core.fsmonitor", "false"),
               ("core.autocrlf", "false"), ("gc.auto", "0"))

# Above this many files in one update, the objects go into one pack (bulk check-in) instead of
# one loose file each: creating thousands of small files costs far more than writing one.
_BULK_PACK_MIN_PATHS = 200

# Present while a pack stored uncompressed by the first snapshot is waiting for the next gc.
RECOMPRESS_MARKER = "recompress-packs"

_LISTED_PATHS_MAX = 500  # beyond this, list everything (argv stays far below the limit)

MODE_FILE = 0o100644
MODE_EXECUTABLE = 0o100755
MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000

TreeEntry = tuple[int, str]  # (git mode, object id)


@dataclass
class Status:
    """What ``git status`` says of the work tree against the shadow index."""

    changed: list[tuple[bytes, bool]]  # (path, tracked)
    ignored: list[bytes]  # ignored files, and folders (with a trailing "/") ignored whole


class ShadowRepo:
    """Runs git against the shadow repository ``git_dir`` with ``work_tree`` as work tree."""

    def __init__(self, git_dir: Path, work_tree: Path, extra_excludes: Sequence[str] = ()):
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.extra_excludes = tuple(extra_excludes)
        self.env = self._environment()
        # How git is started: empty, or bubblewrap hiding rule files git would block on
        # (set before each snapshot from rule_files.RuleFileGuard)
        self.wrapper: tuple[str, ...] = ()

    def _environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update({
            "LC_ALL": "C", "LANG": "C", "LANGUAGE": "C",
            "GIT_DIR": str(self.git_dir), "GIT_WORK_TREE": str(self.work_tree),
            "GIT_INDEX_FILE": str(self.git_dir / "index"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat",
            "GIT_NO_REPLACE_OBJECTS": "1", "GIT_LITERAL_PATHSPECS": "1",
            "GIT_AUTHOR_NAME": AUTHOR[0], "GIT_AUTHOR_EMAIL": AUTHOR[1],
            "GIT_COMMITTER_NAME": AUTHOR[0], "GIT_COMMITTER_EMAIL": AUTHOR[1],
            "GIT_CONFIG_COUNT": str(len(_ENV_CONFIG)),
        })
        for n, (key, value) in enumerate(_ENV_CONFIG):
            env[f"GIT_CONFIG_KEY_{n}"] = key
            env[f"GIT_CONFIG_VALUE_{n}"] = value
        return env

    # -- running git ---------------------------------------------------------------------------

    def run(self, *args: str, input: bytes | None = None, timeout: float = GIT_TIMEOUT_S,
            ok_codes: Sequence[int] = (0,), env: dict[str, str] | None = None,
            stderr: list[bytes] | None = None) -> bytes:
        """stdout of ``git args`` (its stderr appended to ``stderr``); raises
        :class:`CheckpointError` on another exit code."""
        argv = [*self.wrapper, "git", *args]
        try:
            proc = subprocess.run(
                argv, input=input, stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True, timeout=timeout, env=env or self.env,
                cwd=self.work_tree, check=False)
        except subprocess.TimeoutExpired as exc:
            raise CheckpointError(f"git {args[0]} timed out after {timeout:.0f} s") from exc
        except OSError as exc:
            raise CheckpointError(f"git could not be started: {exc}") from exc
        if stderr is not None:
            stderr.append(proc.stderr)
        if proc.returncode not in ok_codes:
            msg = proc.stderr.decode("utf-8", "replace").strip()
            raise CheckpointError(f"git {args[0]} failed ({proc.returncode}): {msg}")
        return proc.stdout

    def run_capped(self, *args: str, max_bytes: int) -> tuple[bytes, bool]:
        """The first ``max_bytes`` of stdout and whether there was more (git is then ended)."""
        proc = subprocess.Popen([*self.wrapper, "git", *args], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=self.env, cwd=self.work_tree)
        timer = threading.Timer(GIT_TIMEOUT_S, proc.kill)
        timer.start()
        try:
            assert proc.stdout is not None
            data = proc.stdout.read(max_bytes + 1)
            truncated = len(data) > max_bytes
            if truncated:
                proc.kill()
            proc.wait()
        finally:
            timer.cancel()
            if proc.stdout is not None:
                proc.stdout.close()
        return data[:max_bytes], truncated

    @contextmanager
    def blob_reader(self) -> Iterator[BlobReader]:
        """A ``git cat-file --batch`` kept open for reading many blobs in a row."""
        proc = subprocess.Popen([*self.wrapper, "git", "cat-file", "--batch"],
                                stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=self.env, cwd=self.work_tree)
        timer = threading.Timer(BULK_TIMEOUT_S, proc.kill)
        timer.start()
        try:
            yield BlobReader(proc)
        finally:
            timer.cancel()
            if proc.stdin is not None:
                proc.stdin.close()
            proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()

    # -- set-up --------------------------------------------------------------------------------

    def is_initialized(self) -> bool:
        return (self.git_dir / "HEAD").is_file() and (self.git_dir / "config").is_file()

    def initialize(self) -> None:
        """Create the shadow (or refresh its config and excludes), idempotently."""
        if not self.is_initialized():
            self.git_dir.mkdir(parents=True, exist_ok=True)
            env = {k: v for k, v in self.env.items()
                   if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
            self.run("init", "--quiet", "--bare", str(self.git_dir), env=env)
            # the newest checkpoint: keeps HEAD equal to the index, so status lists only changes
            (self.git_dir / "HEAD").write_text("ref: refs/heads/latest\n")
        (self.git_dir / "config").write_text(_CONFIG)
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_bytes(ATTRIBUTES)
        excludes = [*BUILTIN_EXCLUDES, *self.extra_excludes]
        (info / "exclude").write_text("".join(f"{line}\n" for line in excludes))
        hooks = self.git_dir / "hooks"  # samples only; hooksPath points elsewhere anyway
        if hooks.is_dir():
            for sample in hooks.iterdir():
                sample.unlink(missing_ok=True)

    # -- snapshot steps ------------------------------------------------------------------------

    def changed_paths(self) -> list[tuple[bytes, bool]]:
        return self.status(ignored=False).changed
    def status(self, *, ignored: bool = True) -> Status:
        """Every path whose state differs from the shadow index, and (``ignored``) what the
        ignore rules keep out of it.

        Untracked paths ending in ``/`` are repositories of their own (nested repositories,
        submodules): git lists such a folder but never what is inside.
        """
        # "normal" untracked mode reports a new folder once instead of every file in it:
        # ~25% cheaper than "all" on a large tree, and new folders are rare between calls;
        # "matching" lists an ignored folder once, not its files
        out = self.run("status", "--porcelain=v2", "-z", "--untracked-files=normal",
                       "--no-renames", "--ignore-submodules=all",
                       "--ignored=matching" if ignored else "--ignored=no")
        result = Status([], [])
        new_folders: list[bytes] = []
        for record in out.split(b"\0"):
            kind = record[:1]
            if kind == b"1":
                result.changed.append((record.split(b" ", 8)[8], True))
            elif kind == b"u":
                result.changed.append((record.split(b" ", 10)[10], True))
            elif kind == b"?" and record.endswith(b"/"):
                new_folders.append(record[2:])
            elif kind == b"?":
                result.changed.append((record[2:], False))
            elif kind == b"!":
                result.ignored.append(record[2:])
        if new_folders:
            limit = [os.fsdecode(f.rstrip(b"/")) for f in new_folders] \
                if len(new_folders) <= _LISTED_PATHS_MAX else []
            listed = self.run("ls-files", "-z", "--others", "--exclude-standard", "--", *limit)
            result.changed += [(path, False) for path in listed.split(b"\0") if path]
        return result

    def update_index(self, paths: Sequence[bytes]) -> list[bytes]:
        """Hash ``paths`` into the shadow index (added, changed or, when missing, removed);
        the paths git refused to record (it says "Ignoring path" and goes on)."""
        if not paths:
            return []
        bulk = ["-c", "core.bigFileThreshold=1", "-c", "core.compression=1"] \
            if len(paths) >= _BULK_PACK_MIN_PATHS else []
        said: list[bytes] = []
        self.run(*bulk, "update-index", "--add", "--remove", "--replace", "-z", "--stdin",
                 input=b"".join(p + b"\0" for p in paths), timeout=BULK_TIMEOUT_S,
                 stderr=said)
        if b"Ignoring path " not in said[0]:
            return []
        return [p for p in paths if b"Ignoring path " + p + b"\n" in said[0]]

    def index_is_empty(self) -> bool:
        return not (self.git_dir / "index").exists()

    def add_to_empty_index(self, paths: Sequence[bytes], workers: int, *,
                           max_file_bytes: int = 1 << 62) -> list[bytes]:
        """Store ``paths`` (all new, none git refuses) and make them the shadow index,
        ``workers`` threads at once; what git refused of those left to it.

        A first snapshot of a large project is bound by hashing and writing objects, which
        ``git update-index`` does one file at a time on one core. The files go into one pack
        written by :func:`write_pack` (uncompressed: :meth:`collect_garbage` recompresses it),
        and the index is written with each file's stat data, so the next ``git status`` hashes
        nothing that did not change. Files that changed while read, or are no longer regular
        files or symlinks, are left to ``git update-index``."""
        ordered = sorted(set(paths))
        pack_dir = self.git_dir / "objects" / "pack"
        try:
            pack_dir.mkdir(parents=True, exist_ok=True)
            stored, left = write_pack(os.fsencode(self.work_tree), ordered, pack_dir,
                                      workers=workers, max_bytes=max_file_bytes)
            if STORED_LEVEL == 0:
                (self.git_dir / RECOMPRESS_MARKER).touch()
            write_atomically(self.git_dir / "index", index_bytes(stored))
        except OSError:  # e.g. a full disk: git tries, and says why if it fails too
            return self.update_index(ordered)
        return self.update_index(left)

    def remove_from_index(self, paths: Sequence[bytes]) -> None:
        if paths:
            self.run("update-index", "--force-remove", "-z", "--stdin",
                     input=b"".join(p + b"\0" for p in paths))

    def write_tree(self) -> str:
        return self.run("write-tree").decode().strip()

    def commit_tree(self, tree: str, message: str, when: float,
                    keep: Sequence[tuple[str, str]] = ()) -> str:
        """Store a commit of ``tree`` and return its id; ``keep`` (name, blob id) are kept
        reachable by a parent commit that holds only them (the project repository's files).

        Written directly as loose objects (the format every git reads) rather than by
        ``git commit-tree``: a process start is a fifth of an incremental snapshot's time.
        """
        objects = self.git_dir / "objects"
        seconds = int(when)
        who = f"{AUTHOR[0]} <{AUTHOR[1]}> {seconds} +0000"
        parent = ""
        if keep:
            entries = b"".join(b"100644 %s\0%s" % (name.encode(), bytes.fromhex(oid))
                               for name, oid in sorted(keep))
            kept = write_object(objects, "tree", entries)
            body = f"tree {kept}\nauthor {who}\ncommitter {who}\n\nrepository state\n"
            parent = f"parent {write_object(objects, 'commit', body.encode())}\n"
        body = f"tree {tree}\n{parent}author {who}\ncommitter {who}\n\n{message}"
        return write_object(objects, "commit", body.encode())

    def keep_commit(self, commit: str) -> None:
        """Reference ``commit`` (so gc keeps it) and make it the newest checkpoint.

        Loose ref files written the way git writes them (``<ref>.lock``, then rename); the
        store's lock keeps any other git from updating refs meanwhile.
        """
        line = f"{commit}\n".encode()
        for ref in (f"refs/tebiki/{commit}", "refs/heads/latest"):
            path = self.git_dir / ref
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, line, lock_suffix=True)

    # -- reading -------------------------------------------------------------------------------

    def tree_entries(self, commit: str,
                     paths: Sequence[str] | None = None) -> dict[str, TreeEntry]:
        """path -> (mode, object id) of every file and symlink in ``commit`` (under ``paths``,
        files or folders, when given)."""
        limit: list[str] = []
        if paths is not None and len(paths) <= _LISTED_PATHS_MAX:
            if not paths:
                return {}
            limit = ["--", *paths]
        out = self.run("ls-tree", "-r", "-z", "--full-tree", commit, *limit)
        entries: dict[str, TreeEntry] = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, _kind, oid = meta.split(b" ")
            entries[os.fsdecode(path)] = (int(mode, 8), oid.decode())
        return entries

    def commit_message(self, commit: str) -> str:
        raw = self.run("cat-file", "commit", commit)
        return raw.partition(b"\n\n")[2].decode("utf-8", "replace")

    def kept_commits(self) -> list[tuple[str, str]]:
        """(commit, message body) of every referenced checkpoint."""
        out = self.run("for-each-ref", "--format=%(objectname)%00%(contents:body)%00",
                       "refs/tebiki/")
        fields = out.decode("utf-8", "replace").split("\0")
        return [(fields[i].strip(), fields[i + 1]) for i in range(0, len(fields) - 1, 2)]

    def drop_refs(self, commits: Sequence[str]) -> None:
        if commits:
            self.run("update-ref", "--stdin", "-z", input="".join(
                f"delete refs/tebiki/{c}\0\0" for c in commits).encode())

    def collect_garbage(self) -> None:
        """Repack what is referenced (or in the index) and delete everything else now.

        After a first snapshot stored uncompressed, every object is deflated afresh (``-F``)
        once; otherwise the packed data is reused as it is.
        """
        marker = self.git_dir / RECOMPRESS_MARKER
        recompress = ["-F"] if marker.exists() else []
        self.run("repack", "-a", "-d", "-q", *recompress, timeout=BULK_TIMEOUT_S)
        marker.unlink(missing_ok=True)
        self.run("prune", "--expire=now", timeout=BULK_TIMEOUT_S)
        self.run("pack-refs", "--all", "--prune")
