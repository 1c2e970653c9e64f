"""Adversarial tests: no file tool call may create, change or delete anything outside the
allowed write directories — whatever the path says, whatever symlinks and hard links exist,
and even when the tree is swapped under the call.

Every test compares a snapshot of everything outside ``doc/`` (types, modes, contents, link
targets) before and after, so a single byte written in the wrong place fails it.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import app.core.tools.fs.writer as scoped_fs  # the writer reads HAVE_DIR_FD, so patch it there
from app.core.tools.base import ToolContext
from app.core.tools.builtin.edit_file import create as create_edit
from app.core.tools.builtin.write_file import create as create_write
from app.core.tools.default_registry import default_registry
from app.core.tools.fs.errors import FsError, OutsideScopeError
from app.core.tools.fs.paths import resolve_for_subject
from app.core.tools.fs.scope import ScopedFs


def snapshot(root: Path, skip: Path) -> dict[str, tuple]:
    """Everything under root except the subtree ``skip``, without following symlinks."""
    state: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == skip:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = here / name
            if p == skip:
                continue
            st_ = os.lstat(p)
            if os.path.islink(p):
                state[str(p)] = ("link", os.readlink(p))
            elif p.is_dir():
                state[str(p)] = ("dir", st_.st_mode)
            else:
                digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "-"
                state[str(p)] = ("file", st_.st_mode, digest)
    return state


class World:
    """tmp/{outside, home, project/{doc (allowed), doc_evil, top.txt}} with nasty links."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.outside = tmp / "outside"
        (self.outside / "dir").mkdir(parents=True)
        (self.outside / "secret.txt").write_text("secret\n")
        self.home = tmp / "home"
        self.home.mkdir()
        (self.home / ".bashrc").write_text("secret rc\n")
        self.project = tmp / "project"
        self.doc = self.project / "doc"
        (self.doc / "sub").mkdir(parents=True)
        (self.project / "doc_evil").mkdir()
        (self.project / "top.txt").write_text("secret top\n")
        (self.doc / "inner.txt").write_text("inner secret\n")
        os.symlink("../../outside", self.doc / "link_out")
        os.symlink("../../outside/secret.txt", self.doc / "link_file")
        os.symlink("../../outside/new_by_dangling.txt", self.doc / "dangling")
        os.symlink("..", self.doc / "rel_escape")
        os.symlink(str(self.project / "top.txt"), self.doc / "abs_link")
        os.symlink("loop_b", self.doc / "loop_a")
        os.symlink("loop_a", self.doc / "loop_b")
        self.ctx = ToolContext(project_root=self.project, allowed_write_dirs=("doc",))

    def snap(self) -> dict[str, tuple]:
        return snapshot(self.tmp, self.doc)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = World(tmp_path.resolve())
    monkeypatch.setenv("HOME", str(w.home))
    return w


@pytest.fixture(params=[True, False], ids=["dirfd", "path-fallback"])
def walk_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    if request.param and not scoped_fs.HAVE_DIR_FD:
        pytest.skip("no dir-fd support on this platform")
    monkeypatch.setattr(scoped_fs, "HAVE_DIR_FD", request.param)
    return request.param


ATTACK_PATHS = [
    "../top.txt", "../new_top.txt", "doc/../top.txt", "doc/../../outside/secret.txt",
    "{tmp}/outside/secret.txt", "{tmp}/outside/new.txt", "{tmp}/project/top.txt",
    "~/.bashrc", "~/new.txt", "~/../outside/secret.txt", "~",
    "doc_evil/x.txt", "doc/../doc_evil/x.txt", "{tmp}/project/doc_evil/x.txt", "doc_evil",
    "doc/link_out/secret.txt", "doc/link_out/fresh.txt", "doc/link_out/newdir/x.txt",
    "doc/link_out/dir/x.txt", "doc/link_file", "doc/dangling", "doc/abs_link",
    "doc/rel_escape/top.txt", "doc/rel_escape/doc_evil/x.txt", "doc/rel_escape/new.txt",
    "doc/loop_a", "doc/loop_a/x.txt", "doc/sub/../../top.txt", "doc/./../top.txt",
    "doc//..//top.txt", "doc/newdir/../../made_outside/x.txt", "doc/link_out/../project/top.txt",
    "../outside/newdir/a/b.txt", "{tmp}/outside/newdir/a/b.txt", "../project/doc/../top.txt",
    "doc\x00/x.txt", "doc/x.txt\x00", "doc/", "doc/..", "doc/.", ".", "", "/", "doc/link_out/",
    "doc/sub/",
]


def expand(path: str, world: World) -> str:
    return path.replace("{tmp}", str(world.tmp))


@pytest.mark.parametrize("path", ATTACK_PATHS)
@pytest.mark.parametrize("mode", ["create", "overwrite", "append"])
async def test_write_file_never_escapes(world: World, walk_mode: bool, path: str,
                                        mode: str) -> None:
    before = world.snap()
    r = await create_write().execute({"path": expand(path, world), "content": "pwned\n",
                                      "mode": mode, "create_dirs": True}, world.ctx)
    assert r.is_error, r.content
    assert world.snap() == before


@pytest.mark.parametrize("path", ATTACK_PATHS)
async def test_edit_file_never_escapes(world: World, walk_mode: bool, path: str) -> None:
    before = world.snap()
    r = await create_edit().execute({"path": expand(path, world), "old_string": "secret",
                                     "new_string": "pwned", "replace_all": True}, world.ctx)
    assert r.is_error, r.content
    assert world.snap() == before


async def test_the_snapshot_notices_an_outside_write(world: World) -> None:
    """Guard against a vacuous corpus: the comparison must see a one-byte change."""
    before = world.snap()
    with open(world.outside / "secret.txt", "a") as f:
        f.write("!")
    assert world.snap() != before


async def test_refusals_do_not_follow_through_and_inside_writes_work(world: World,
                                                                     walk_mode: bool) -> None:
    before = world.snap()
    r = await create_write().execute({"path": "doc/sub/new/x.txt", "content": "ok"}, world.ctx)
    assert not r.is_error
    assert (world.doc / "sub" / "new" / "x.txt").read_text() == "ok"
    assert world.snap() == before


async def test_preview_never_writes(world: World) -> None:
    before = world.snap()
    doc_before = sorted(os.listdir(world.doc))
    for path in [*ATTACK_PATHS, "doc/new/dir/x.txt"]:
        await create_write().preview({"path": expand(path, world), "content": "x",
                                      "create_dirs": True}, world.ctx)
        await create_edit().preview({"path": expand(path, world), "old_string": "secret",
                                     "new_string": "x"}, world.ctx)
    assert world.snap() == before and sorted(os.listdir(world.doc)) == doc_before


@pytest.mark.parametrize("mode", ["overwrite", "append", "edit"])
async def test_hard_link_to_outside_file_is_never_written_through(world: World, walk_mode: bool,
                                                                  mode: str) -> None:
    os.link(world.outside / "secret.txt", world.doc / "hl.txt")
    before = {k: v for k, v in world.snap().items()}
    if mode == "edit":
        r = await create_edit().execute({"path": "doc/hl.txt", "old_string": "secret",
                                         "new_string": "changed"}, world.ctx)
    else:
        r = await create_write().execute({"path": "doc/hl.txt", "content": "changed\n",
                                          "mode": mode}, world.ctx)
    assert not r.is_error, r.content
    assert (world.outside / "secret.txt").read_text() == "secret\n"
    assert "changed" in (world.doc / "hl.txt").read_text()
    assert world.snap() == before


async def test_append_through_symlink_inside_scope_appends_to_target(world: World) -> None:
    (world.doc / "log.txt").write_text("a\n")
    os.symlink("log.txt", world.doc / "log_link")
    r = await create_write().execute({"path": "doc/log_link", "content": "b\n",
                                      "mode": "append"}, world.ctx)
    assert not r.is_error and (world.doc / "log.txt").read_text() == "a\nb\n"


async def test_symlinked_allowed_dir_pointing_inside_is_usable(world: World) -> None:
    real = world.doc / "real"
    real.mkdir()
    os.symlink("real", world.doc / "alias")
    r = await create_write().execute({"path": "doc/alias/f.txt", "content": "x"}, world.ctx)
    assert not r.is_error and (real / "f.txt").read_text() == "x"


# -- the tree changes under the call (TOCTOU) -----------------------------------------------

def test_directory_swapped_for_symlink_after_the_check(world: World) -> None:
    fs = ScopedFs(world.project, [world.doc])
    plan = fs.check_write("doc/sub/x.txt", "create", True)
    os.rename(world.doc / "sub", world.doc / "sub_moved")
    os.symlink(world.outside, world.doc / "sub")
    before = world.snap()
    with pytest.raises(OutsideScopeError):
        fs._execute_write(plan, b"pwned", "create", create_dirs=True)
    assert world.snap() == before and not (world.outside / "x.txt").exists()


@pytest.mark.parametrize("mode", ["create", "overwrite", "append"])
def test_file_swapped_for_symlink_after_the_check(world: World, mode: str) -> None:
    target = world.doc / "t.txt"
    target.write_text("mine\n")
    fs = ScopedFs(world.project, [world.doc])
    plan = fs.check_write("doc/t.txt", "overwrite", False)
    target.unlink()
    os.symlink(world.outside / "secret.txt", target)
    before = world.snap()
    with pytest.raises(FsError):
        fs._execute_write(plan, b"pwned\n", mode, create_dirs=False)
    assert world.snap() == before


def test_allowed_dir_replaced_by_symlink(world: World) -> None:
    fs = ScopedFs(world.project, [world.doc])
    plan = fs.check_write("doc/new.txt", "create", False)
    os.rename(world.doc, world.project / "doc_moved")
    os.symlink(world.outside, world.doc)
    before = snapshot(world.tmp, world.project / "doc_moved")
    with pytest.raises(OutsideScopeError):
        fs._execute_write(plan, b"pwned", "create", create_dirs=False)
    # And a fresh call resolves the new symlink and refuses up front.
    with pytest.raises(OutsideScopeError):
        fs.write_bytes("doc/new.txt", b"pwned", "create")
    assert snapshot(world.tmp, world.project / "doc_moved") == before
    assert not (world.outside / "new.txt").exists()


def test_missing_allowed_dir_created_later_as_symlink(world: World) -> None:
    fs = ScopedFs(world.project, [world.project / "later"])
    os.symlink(world.outside, world.project / "later")
    before = world.snap()
    with pytest.raises(OutsideScopeError):
        fs.write_bytes("later/x.txt", b"pwned", "create", create_dirs=True)
    assert world.snap() == before


FLIPPER = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
RENAME_EXCHANGE = 2
if libc.renameat2(-100, a, -100, b, RENAME_EXCHANGE) != 0:
    print("unsupported", flush=True)
    sys.exit(0)
print("ready", flush=True)
while True:
    libc.renameat2(-100, a, -100, b, RENAME_EXCHANGE)
"""


async def test_context_resolved_before_the_allowed_dir_became_a_symlink(world: World) -> None:
    ctx = ToolContext(project_root=world.project, allowed_write_dirs=("later",))
    os.symlink(world.outside, world.project / "later")
    before = world.snap()
    for mode in ("create", "overwrite", "append"):
        r = await create_write().execute({"path": "later/x.txt", "content": "pwned",
                                          "mode": mode}, ctx)
        assert r.is_error
    assert world.snap() == before


@pytest.mark.skipif(not scoped_fs.HAVE_DIR_FD or not sys.platform.startswith("linux"),
                    reason="race-free walking needs dir fds; the flipper needs renameat2")
def test_concurrent_swapping_never_lets_a_write_out(world: World) -> None:
    """Another process atomically swaps doc/sub between a real directory and a symlink to
    outside (renameat2 RENAME_EXCHANGE, so the name always exists) while writes go to
    doc/sub/...; each write may fail, but none may land outside."""
    fs = ScopedFs(world.project, [world.doc])
    for i in range(3):
        (world.doc / "sub" / f"deep{i}").mkdir()
    os.symlink(world.outside, world.doc / "sub_link")
    before = world.snap()
    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, str(world.doc / "sub"),
                                str(world.doc / "sub_link")], stdout=subprocess.PIPE)
    try:
        assert flipper.stdout is not None
        if flipper.stdout.readline() != b"ready\n":
            pytest.skip("renameat2(RENAME_EXCHANGE) is not supported here")
        for i in range(600):
            for mode in ("create", "overwrite", "append"):
                try:
                    fs.write_bytes(f"doc/sub/deep{i % 3}/new{i % 5}/f{i}.txt", b"x", mode,
                                   create_dirs=True)
                except FsError:
                    pass
    finally:
        flipper.kill()
        flipper.wait()
    assert world.snap() == before
    assert sorted(os.listdir(world.outside)) == ["dir", "secret.txt"]


# -- permission subjects see through the path -----------------------------------------------

def test_subjects_resolve_to_what_is_really_touched(world: World) -> None:
    spec = create_write().spec
    wd = world.project
    assert resolve_for_subject("doc/link_file", wd) == str(world.outside / "secret.txt")
    assert spec.subjects({"path": "doc/link_out/x", "content": ""}, wd) == [
        str(world.outside / "x")]
    assert spec.subjects({"path": "doc/../doc_evil/x", "content": ""}, wd) == [
        str(world.project / "doc_evil" / "x")]
    assert spec.subjects({"path": "~/.bashrc", "content": ""}, wd) == [
        str(world.home / ".bashrc")]


async def test_registry_route_is_equally_confined(world: World) -> None:
    before = world.snap()
    registry = default_registry()
    for name, args in [
        ("write_file", {"path": "../top.txt", "content": "x"}),
        ("write_file", {"path": "doc/link_out/secret.txt", "content": "x", "mode": "append"}),
        ("edit_file", {"path": "doc/link_file", "old_string": "secret", "new_string": "x"}),
    ]:
        r = await registry.execute(name, args, world.ctx)
        assert r.is_error
    assert world.snap() == before


# -- fuzz: random paths built from dangerous pieces -----------------------------------------

SEGMENTS = ["..", ".", "", "doc", "doc_evil", "sub", "link_out", "link_file", "dangling",
            "rel_escape", "abs_link", "loop_a", "outside", "secret.txt", "new", "~", "x.txt",
            "project", "top.txt"]


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["", "/", "~/", "{tmp}/", "{tmp}/project/"]),
       st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=7),
       st.sampled_from(["create", "overwrite", "append", "edit"]))
def test_fuzzed_paths_stay_inside(world: World, prefix: str, parts: list[str],
                                  mode: str) -> None:
    path = expand(prefix, world) + "/".join(parts)
    before = world.snap()
    if mode == "edit":
        call = create_edit().execute({"path": path, "old_string": "secret",
                                      "new_string": "pwned"}, world.ctx)
    else:
        call = create_write().execute({"path": path, "content": "pwned", "mode": mode,
                                       "create_dirs": True}, world.ctx)
    asyncio.run(call)
    assert world.snap() == before, path
