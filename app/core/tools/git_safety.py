"""git_safety: the environment in which every git that Tebiki starts runs, however it is reached.

Why an environment and not git options: a repository's own configuration (``.git/config``, its
includes, its submodules' and worktrees' configs) together with ``.gitattributes`` can name
programs that git runs during ordinary commands — ``core.fsmonitor`` on status,
``diff.<driver>.textconv`` / ``.command`` and ``diff.external`` on diff,
``filter.<driver>.clean`` on status/add, pagers, hooks, signing programs. ``-c`` options only
reach a git whose argv Tebiki writes; they miss ``timeout 20 git status``, a Makefile or a test
runner that runs git, and ``-c`` splits at the first ``=`` so a driver named ``a=b`` cannot be
named at all. Environment variables are inherited by every process a command starts, and git
reads its overrides from ``GIT_CONFIG_COUNT`` / ``GIT_CONFIG_KEY_<n>`` / ``GIT_CONFIG_VALUE_<n>``
(git 2.31+), where key and value are separate strings.

:func:`safe_git_env` returns such an environment:

- no system config (``GIT_CONFIG_NOSYSTEM``) and, instead of the person's global config, a file
  Tebiki writes (``GIT_CONFIG_GLOBAL``, git 2.32+) holding only identity and format settings
  copied from it (name, e-mail, line endings, default branch, safe.directory),
- overrides, in the "command" scope that beats every config file: a fixed set (no fsmonitor, no
  pager, no editor, no signing, no ext:: transport, hooks off unless ``run_hooks``, no network
  protocols unless ``allow_network``), plus a harmless value for every program-running key that
  the repository's configs define — found by listing them with git itself (listing never runs
  programs), the whole output read and parsed on its NUL separators,
- never prompting, never paging, never using replace refs.

The configs consulted are the ones git resolves from the directory (local, worktree, includes),
every include file named anywhere in them whatever its condition, every submodule's config under
``.git/modules`` (nested ones too) and in embedded ``.git`` folders named by ``.gitmodules``, and
every linked worktree's ``config.worktree``. The result is cached per directory and checked
against the size/mtime/inode of each of those files and folders before reuse.

Residual: an embedded ``.git`` folder of a submodule that ``.gitmodules`` does not list is not
scanned (a clone never produces one); the fixed overrides still apply there.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import os
import re
import shutil
import signal
import stat
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from app.core.tools.process_runner import SpawnRefused

__all__ = [
    "GIT_ENV",
    "MIN_GIT_VERSION",
    "GitSafetyError",
    "config_overrides",
    "safe_git_env",
]

MIN_GIT_VERSION = (2, 32)  # GIT_CONFIG_COUNT arrived in 2.31, GIT_CONFIG_GLOBAL in 2.32

GIT_ENV: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_ASKPASS": "false",
    "SSH_ASKPASS": "false",
    "GIT_NO_REPLACE_OBJECTS": "1",
}

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

# Settings copied from the person's own global config into the one Tebiki writes: who they
# are and how text is stored, nothing that names a program.
_GLOBAL_SAFE_KEYS = frozenset({
    "user.name", "user.email", "author.name", "author.email", "committer.name",
    "committer.email", "core.autocrlf", "core.eol", "core.safecrlf", "core.quotepath",
    "core.excludesfile", "init.defaultbranch", "safe.directory", "i18n.commitencoding",
    "i18n.logoutputencoding", "merge.conflictstyle", "diff.algorithm", "pull.rebase", "pull.ff",
})

_SCAN_TIMEOUT_S = 20.0  # for all config reads of one directory together
_MAX_CONFIG_FILES = 2000  # submodule/worktree/include files one scan may read
_MAX_INCLUDE_DEPTH = 10  # as git's own limit
_MAX_TOKEN = 1 << 20  # longest key (or include path) accepted from a listing
_RACY_NS = 2_000_000_000  # a file changed this recently may change again unnoticed by mtime
_CACHE_SIZE = 64


class GitSafetyError(SpawnRefused):
    """git cannot be run safely here (message says why)."""


# -- the public entry point -------------------------------------------------------------------

async def safe_git_env(repo_dir: Path | str, *, base_env: Mapping[str, str],
                       run_hooks: bool = False, allow_network: bool = False) -> dict[str, str]:
    """``base_env`` plus everything that keeps git from running the repository's programs.

    ``repo_dir`` is the directory commands start in (inside a repository or not). Raises
    :class:`GitSafetyError` when git is too old to honour the overrides or the repository's
    configuration cannot be read in time.
    """
    # Inherited GIT_* settings could add config (GIT_CONFIG_PARAMETERS), point elsewhere
    # (GIT_DIR) or name programs (GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF); none are wanted here.
    env = {k: v for k, v in base_env.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    git = shutil.which("git", path=env.get("PATH"))
    if git is None:  # nothing to protect; keep the overrides for a git found some other way
        env["GIT_CONFIG_GLOBAL"] = os.devnull
        _set_overrides(env, config_overrides((), run_hooks=run_hooks,
                                             allow_network=allow_network))
        return env
    await _require_version(git, env)
    env["GIT_CONFIG_GLOBAL"] = await _controlled_global(git, base_env)
    found = await _repository_keys(Path(repo_dir), git, _scan_env(base_env))
    _set_overrides(env, config_overrides(found, run_hooks=run_hooks,
                                         allow_network=allow_network))
    return env


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


def _set_overrides(env: dict[str, str], pairs: list[tuple[str, str]]) -> None:
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for index, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value


def _canonical(key: str) -> str:
    """git's canonical spelling: section and variable lower-cased, subsection kept."""
    first, _, rest = key.partition(".")
    if not rest:
        return key.lower()
    middle, dot, last = rest.rpartition(".")
    return f"{first.lower()}.{middle}{dot}{last.lower()}"


def _scan_env(base_env: Mapping[str, str]) -> dict[str, str]:
    """For reading configs: only repository configs count, and discovery as in safe_git_env."""
    env = {k: v for k, v in base_env.items() if not k.startswith("GIT_")}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_COUNT": "1",
                "GIT_CONFIG_KEY_0": "safe.bareRepository", "GIT_CONFIG_VALUE_0": "explicit"})
    return env


# -- running git to read configuration -----------------------------------------------------------

class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise GitSafetyError("reading the repository's git configuration took too long; "
                                 "git was not run")
        return left


async def _read_tokens(argv: list[str], *, cwd: Path, env: Mapping[str, str],
                       deadline: _Deadline, keep_value: Callable[[str], bool] | None = None,
                       ) -> tuple[int | None, list[tuple[str, str | None]]]:
    """Run a ``git config --list -z`` and return (exit code, [(key, value or None)]).

    The whole output is read, however long, but only what is needed is kept: each entry's key,
    and the value where ``keep_value(key)`` (default: include directives). ``--show-scope``
    tokens come back as keys of their own (``("scope", None)`` precedes each real entry);
    callers pair them up.
    """
    keep = keep_value or _is_include
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=str(cwd), env=dict(env), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True, close_fds=True)
    except OSError as exc:
        raise GitSafetyError(f"cannot read the git configuration in {cwd}: "
                             f"{exc.strerror or exc}") from None
    tokens: list[tuple[str, str | None]] = []
    current = bytearray()
    overflow = False

    def finish(raw: bytes, overflowed: bool) -> None:
        key, newline, value = raw.partition(b"\n")
        text = key.decode("utf-8", "surrogateescape")
        wanted = keep(text)
        if overflowed and (not newline or wanted):
            # a key (or a value we need) too long to be real; fail rather than guess
            raise GitSafetyError("the repository's git configuration has an entry too long to "
                                 "check; git was not run")
        tokens.append((text, value.decode("utf-8", "surrogateescape")
                       if wanted and newline else None))

    async def consume() -> None:
        nonlocal current, overflow
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(1 << 18):
            pieces = chunk.split(b"\0")
            for piece in pieces[:-1]:  # each completes a token
                if not current and not overflow:
                    finish(piece, False)
                    continue
                if not overflow:
                    current += piece
                finish(bytes(current), overflow)
                current, overflow = bytearray(), False
            if not overflow:
                current += pieces[-1]
                if len(current) > _MAX_TOKEN:
                    # keep the head (the key is there); drop the rest of a huge value
                    del current[_MAX_TOKEN:]
                    overflow = True
        await proc.wait()

    try:
        await asyncio.wait_for(consume(), timeout=deadline.left())
    except TimeoutError:
        raise GitSafetyError("reading the repository's git configuration took too long; git "
                             "was not run") from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
    return proc.returncode, tokens


def _is_include(key: str) -> bool:
    if key[:7].lower() != "include":  # most keys: decided without lower-casing it all
        return False
    lower = key.lower()
    return lower == "include.path" or (lower.startswith("includeif.")
                                       and lower.endswith(".path"))


_versions: dict[tuple[str, int], tuple[int, int] | None] = {}


async def _require_version(git: str, env: Mapping[str, str]) -> None:
    try:
        stamp = (git, os.stat(git).st_mtime_ns)
    except OSError:
        stamp = (git, 0)
    if stamp not in _versions:
        proc = await asyncio.create_subprocess_exec(
            git, "version", env=dict(env), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout=10)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            out = b""
        match = re.search(rb"(\d+)\.(\d+)", out)
        _versions[stamp] = (int(match[1]), int(match[2])) if match else None
    version = _versions[stamp]
    if version is None or version < MIN_GIT_VERSION:
        found = ".".join(map(str, version)) if version else "unknown"
        raise GitSafetyError(
            f"git {found} at {git} is too old to be run safely (Tebiki needs git "
            f"{'.'.join(map(str, MIN_GIT_VERSION))} or newer to keep a repository's "
            "configuration from running programs); please update git")


# -- the controlled global config ----------------------------------------------------------------

Stamp = tuple[int, int, int, int] | None


def _stamp(path: Path) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


_state_dir: Path | None = None


def _private_dir() -> Path:
    global _state_dir
    if _state_dir is None or not _state_dir.is_dir():
        # mkdtemp: a fresh 0700 folder no other user can have prepared
        _state_dir = Path(tempfile.mkdtemp(prefix="tebiki-git-"))
        atexit.register(shutil.rmtree, _state_dir, True)
    return _state_dir


@dataclass
class _Global:
    key: tuple[object, ...]
    path: Path
    stamp: Stamp


_global: _Global | None = None


async def _controlled_global(git: str, base_env: Mapping[str, str]) -> str:
    """The path of the global config Tebiki wrote; rewritten when the source or it changed."""
    global _global
    home = base_env.get("HOME", "")
    xdg = base_env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
    sources = [Path(home, ".gitconfig")] if home else []
    if xdg:
        sources.append(Path(xdg, "git", "config"))
    key = (home, xdg, tuple(_stamp(p) for p in sources))
    if _global is not None and _global.key == key and _stamp(_global.path) == _global.stamp \
            and _global.stamp is not None:
        return str(_global.path)
    folder = _private_dir()
    env = {k: v for k, v in base_env.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    pairs: list[tuple[str, str]] = []
    if home:
        # --includes: identities often live in an included file; reading files runs nothing.
        # cwd is our private folder so no repository is discovered.
        code, tokens = await _read_tokens(
            [git, "config", "--global", "--includes", "--list", "-z"], cwd=folder, env=env,
            deadline=_Deadline(_SCAN_TIMEOUT_S),
            keep_value=lambda key: key.lower() in _GLOBAL_SAFE_KEYS)
        if code == 0:
            pairs = [(key.lower(), value) for key, value in tokens
                     if value is not None and key.lower() in _GLOBAL_SAFE_KEYS]
    path = _write_global(folder, pairs)
    _global = _Global(key, path, _stamp(path))
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


# -- the repository's configs ----------------------------------------------------------------------

@dataclass
class _Scan:
    keys: frozenset[str]
    stamps: tuple[tuple[str, Stamp], ...]


_cache: OrderedDict[tuple[str, str, str], _Scan] = OrderedDict()


async def _repository_keys(start: Path, git: str, env: Mapping[str, str]) -> frozenset[str]:
    with contextlib.suppress(OSError):
        start = start.resolve()
    # HOME: include paths starting with ~/ resolve against it
    cache_key = (str(start), git, env.get("HOME", ""))
    cached = _cache.get(cache_key)
    if cached is not None and all(_stamp(Path(p)) == s for p, s in cached.stamps):
        _cache.move_to_end(cache_key)
        return cached.keys
    scan, cacheable = await _scan(start, git, env)
    if not cacheable:
        _cache.pop(cache_key, None)
        return scan.keys
    _cache[cache_key] = scan
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return scan.keys


async def _listing(start: Path, git: str, env: Mapping[str, str],
                   deadline: _Deadline) -> set[str]:
    """Keys of every repository scope git itself resolves from ``start`` (includes followed)."""
    code, tokens = await _read_tokens(
        [git, "config", "--list", "-z", "--show-scope", "--includes"], cwd=start, env=env,
        deadline=deadline)
    keys: set[str] = set()
    if code == 0:
        # "scope NUL key LF value NUL": scope tokens alternate with entries
        for (scope, _), (key, _) in zip(tokens[0::2], tokens[1::2], strict=False):
            if scope not in ("global", "system", "command") and key:
                keys.add(key)
    return keys


async def _scan(start: Path, git: str, env: Mapping[str, str]) -> tuple[_Scan, bool]:
    """(every key found, whether the stamps in it prove it current later)."""
    deadline = _Deadline(_SCAN_TIMEOUT_S)
    began = time.time_ns()
    found = _discover(start)
    if found is None:
        if _surely_outside_repositories(start):
            # Nothing git could discover: its listing would hold no repository scope, so
            # none is spawned (the fixed overrides and the controlled global still apply).
            return _Scan(frozenset(), ()), False
        # git may see something our discovery does not; the listing covers it, but without
        # files to watch the result must not be reused
        return _Scan(frozenset(await _listing(start, git, env, deadline)), ()), False
    keys = await _listing(start, git, env, deadline)
    gitdir, commondir, top, walked = found
    stamps: dict[str, Stamp] = {str(p): _stamp(p) for p in walked}
    files: list[tuple[Path, int]] = []  # (config file, include depth)
    for repo_dir in _repository_dirs(gitdir, commondir, stamps, deadline):
        files += [(repo_dir / "config", 0), (repo_dir / "config.worktree", 0)]
    if top is not None:
        for sub in await _embedded_submodules(top, git, env, deadline, stamps):
            files += [(sub / "config", 0), (sub / "config.worktree", 0)]
    read: list[Stamp] = []
    seen: set[str] = set()
    while files:
        path, depth = files.pop()
        if str(path) in seen:
            continue
        seen.add(str(path))
        if len(seen) > _MAX_CONFIG_FILES:
            raise GitSafetyError("the repository has too many git config files to check; git "
                                 "was not run")
        stamp = _stamp(path)
        stamps[str(path)] = stamp
        if stamp is None:
            continue
        read.append(stamp)
        code, tokens = await _read_tokens([git, "config", "--file", str(path), "--list", "-z"],
                                          cwd=start, env=env, deadline=deadline)
        if code != 0:
            continue  # git refuses such a file everywhere it appears, so it configures nothing
        for key, value in tokens:
            keys.add(key)
            if value and _is_include(key) and depth < _MAX_INCLUDE_DEPTH:
                target = _include_target(value, path, env)
                if target is not None:
                    files.append((target, depth + 1))
    # A file changed within the timestamp granularity could change again without its stamp
    # changing, so such a result is used once and not kept.
    racy = any(s[0] >= began - _RACY_NS for s in read if s is not None)
    return _Scan(frozenset(keys), tuple(stamps.items())), not racy


def _include_target(value: str, including: Path, env: Mapping[str, str]) -> Path | None:
    if value.startswith("~/") or value == "~":
        home = env.get("HOME")
        if not home:
            return None
        return Path(home, value[2:])
    if value.startswith("~"):
        expanded = os.path.expanduser(value)
        return None if expanded == value else Path(expanded)
    return including.parent / value


def _is_gitdir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "refs").is_dir() and (
        (path / "objects").is_dir() or (path / "commondir").is_file())


def _read_gitfile(path: Path) -> Path | None:
    try:
        with open(path, "rb") as handle:  # a gitfile is one short line; never read a huge one
            text = handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:"):].strip())
    return target if target.is_absolute() else path.parent / target


def _discover(start: Path) -> tuple[Path, Path, Path | None, list[Path]] | None:
    """(gitdir, commondir, work tree top or None, folders walked) as git would find them."""
    walked: list[Path] = []
    for folder in (start, *start.parents):
        walked.append(folder)
        dotgit = folder / ".git"
        gitdir: Path | None = None
        top: Path | None = folder
        if dotgit.is_file():
            gitdir = _read_gitfile(dotgit)
            walked.append(dotgit)
        elif dotgit.is_dir() and _is_gitdir(dotgit):
            gitdir = dotgit
        elif _is_gitdir(folder):
            gitdir, top = folder, None
        if gitdir is None:
            continue
        commondir = gitdir
        pointer = gitdir / "commondir"
        if pointer.is_file():
            with contextlib.suppress(OSError):
                raw = Path(pointer.read_text(encoding="utf-8", errors="replace").strip())
                commondir = raw if raw.is_absolute() else gitdir / raw
            walked.append(pointer)
        return gitdir, commondir, top, walked
    return None


def _surely_outside_repositories(start: Path) -> bool:
    """Whether ``start`` and every folder above it are plainly not in any repository.

    Stricter than git's discovery (the scan environment has no GIT_DIR or ceiling and refuses
    implicit bare repositories): any ``.git`` or ``HEAD`` entry, valid or not, or any folder
    that cannot be examined means "not sure", and the caller lets git itself decide.
    """
    if not start.is_absolute():
        return False
    for folder in (start, *start.parents):
        try:
            if not stat.S_ISDIR(os.stat(folder).st_mode):
                return False
        except OSError:
            return False
        for name in (".git", "HEAD"):
            try:
                os.lstat(folder / name)
            except FileNotFoundError:
                continue
            except OSError:
                return False
            return False
    return True


def _repository_dirs(gitdir: Path, commondir: Path, stamps: dict[str, Stamp],
                     deadline: _Deadline) -> list[Path]:
    """gitdir, commondir, their linked worktrees and every submodule gitdir below them."""
    out: list[Path] = [gitdir, commondir]
    queue = [commondir]
    visited: set[str] = set()
    while queue:
        deadline.left()
        repo = queue.pop()
        if str(repo) in visited:
            continue
        visited.add(str(repo))
        worktrees = repo / "worktrees"
        stamps[str(worktrees)] = _stamp(worktrees)
        with contextlib.suppress(OSError):
            out += [w for w in worktrees.iterdir() if w.is_dir()]
        modules = repo / "modules"
        stamps[str(modules)] = _stamp(modules)
        # Module names may contain "/", so a module's gitdir can sit at any depth; folders
        # that are not gitdirs are walked through, gitdirs are recorded and searched in turn.
        pending = [modules] if modules.is_dir() else []
        while pending:
            folder = pending.pop()
            if len(visited) + len(pending) > _MAX_CONFIG_FILES:
                raise GitSafetyError("the repository has too many submodules to check; git "
                                     "was not run")
            with contextlib.suppress(OSError):
                for child in folder.iterdir():
                    if not child.is_dir() or child.is_symlink():
                        continue
                    if _is_gitdir(child):
                        out.append(child)
                        queue.append(child)
                    else:
                        stamps[str(child)] = _stamp(child)
                        pending.append(child)
    return out


async def _embedded_submodules(top: Path, git: str, env: Mapping[str, str],
                               deadline: _Deadline, stamps: dict[str, Stamp]) -> list[Path]:
    """Gitdirs of submodules whose ``.git`` is a folder inside the work tree."""
    gitmodules = top / ".gitmodules"
    stamps[str(gitmodules)] = _stamp(gitmodules)
    if not gitmodules.is_file():
        return []
    proc = await asyncio.create_subprocess_exec(
        git, "config", "--file", str(gitmodules), "-z", "--get-regexp", r"^submodule\..*\.path$",
        cwd=str(top), env=dict(env), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        output, _ = await asyncio.wait_for(proc.communicate(), timeout=deadline.left())
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise GitSafetyError("reading .gitmodules took too long; git was not run") from None
    out: list[Path] = []
    for entry in output.split(b"\0"):
        _, newline, value = entry.partition(b"\n")
        if not newline:
            continue
        dotgit = top / value.decode("utf-8", "surrogateescape") / ".git"
        stamps[str(dotgit)] = _stamp(dotgit)
        if dotgit.is_dir() and _is_gitdir(dotgit):
            out.append(dotgit)
    return out
