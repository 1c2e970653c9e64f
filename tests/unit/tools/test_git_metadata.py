"""git_metadata, the walk it shares with persistence_paths, the config parser and the
persistence classifier: what they find, and that the cache is reused only while current."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from app.core.tools.base import GitPermission
from app.core.tools.command_sandbox import protected_git_paths
from app.core.tools.git_config.values import config_values
from app.core.tools.git_metadata import git_metadata
from app.core.tools.persistence import persistence_changes, persistence_reason
from app.core.tools.project_tree import persistence_paths, scan_tree

OLD = 1_000_000_000  # an mtime far in the past: a cached result is trusted


def _git(folder: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


def _age(root: Path) -> None:
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(Path(folder, name), (OLD, OLD), follow_symlinks=False)
    os.utime(root, (OLD, OLD))


def test_the_protected_set_follows_what_git_runs(project: Path, tmp_path: Path) -> None:
    _git(project, "init", "-q")
    _git(project, "config", "core.hooksPath", ".husky/_")
    _git(project, "config", "include.path", "../team.gitconfig")
    (project / "team.gitconfig").write_text("[include]\n\tpath = more.inc\n")
    (project / "vendor" / "lib").mkdir(parents=True)
    _git(project / "vendor" / "lib", "init", "-q")
    (project / "sub").mkdir()
    (project / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    metadata = git_metadata([project], home=str(tmp_path))
    dotgit = project / ".git"
    assert metadata.own == (dotgit,)
    assert {dotgit / "config", dotgit / "hooks", dotgit / "modules",
            dotgit / "worktrees", dotgit / "commondir"} <= set(metadata.code)
    assert project / "vendor" / "lib" / ".git" in metadata.nested
    assert project / "sub" / ".git" in metadata.pointers
    assert {project / ".husky" / "_", project / ".husky", project / "team.gitconfig",
            project / "more.inc"} <= set(metadata.targets)  # includes of includes, relative
    assert dotgit in metadata.read_only(GitPermission.READ_ONLY)
    assert dotgit not in metadata.read_only(GitPermission.READ_WRITE)
    assert metadata.protecting(project / ".husky" / "pre-commit") == project / ".husky"
    assert metadata.protecting(project / "src" / "a.py") is None
    assert project / "more.inc" in metadata.missing()


def test_the_sandbox_gets_only_paths_inside_the_write_folders(project: Path,
                                                              tmp_path: Path) -> None:
    _git(project, "init", "-q")
    _git(project, "config", "include.path", str(tmp_path / "elsewhere.inc"))
    read_only, writable = protected_git_paths([project], GitPermission.READ_WRITE)
    assert writable == [project / ".git"]
    assert project / ".git" / "config" in read_only
    assert all(p.is_relative_to(project) for p in read_only)


def test_the_result_is_reused_until_a_folder_changes(project: Path, tmp_path: Path) -> None:
    _git(project, "init", "-q")
    (project / "src" / "deep").mkdir(parents=True)
    _age(project)
    first = git_metadata([project], home=str(tmp_path))
    assert git_metadata([project], home=str(tmp_path)) is first
    (project / "src" / "deep" / "x").mkdir()
    _git(project / "src" / "deep" / "x", "init", "-q")  # a new nested repository, deep down
    again = git_metadata([project], home=str(tmp_path))
    assert project / "src" / "deep" / "x" / ".git" in again.nested


def test_a_changed_config_is_read_again(project: Path, tmp_path: Path) -> None:
    _git(project, "init", "-q")
    _age(project)
    git_metadata([project], home=str(tmp_path))
    _git(project, "config", "core.hooksPath", ".githooks")
    assert project / ".githooks" in git_metadata([project], home=str(tmp_path)).targets


def test_the_walk_says_when_it_stopped(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.core.tools.project_tree as tree
    for n in range(5):
        (project / f"f{n}").write_text("")
    monkeypatch.setattr(tree, "MAX_ENTRIES", 3)
    tree._cache.clear()
    assert "more than 3" in scan_tree(project).incomplete
    tree._cache.clear()


def test_persistence_paths_are_found_by_the_walk(project: Path) -> None:
    for name in (".vscode/tasks.json", ".venv/lib/site-packages/x.pth", ".husky/pre-commit",
                 "src/main.py", ".envrc", "deep/er/sitecustomize.py"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("")
    found = persistence_paths(project)
    assert found == sorted(project / p for p in (
        ".vscode/tasks.json", ".venv/lib/site-packages/x.pth", ".husky", ".envrc",
        "deep/er/sitecustomize.py"))


def test_persistence_reason_and_changes() -> None:
    assert persistence_reason("vendor/lib/.git/hooks/pre-commit")
    assert persistence_reason(".env.localrc")
    assert persistence_reason("a/b/c.pth")
    assert persistence_reason("x.code-workspace")
    assert persistence_reason("Makefile") is None
    assert persistence_reason(".vscode/extensions.json") is None
    assert persistence_reason("tasks.json") is None
    changed = ["src/a.py", ".git/commondir", ".husky/pre-push", "README.md"]
    assert [p for p, _ in persistence_changes(changed)] == [".git/commondir", ".husky/pre-push"]


def test_the_config_parser_reads_what_git_reads(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        '[core]\n\thooksPath = ".git" "hooks" ; comment\n'
        '[includeIf "gitdir:~/w/"]\n path = a\\\n.inc\n'
        '[core "sub"] hookspath = no\n'
        '[Include]path=b.inc # trailing\n'
        '[core.x]\n\thooksPath = old-style\n')
    wanted = frozenset({"core.hookspath", "include.path", "includeif.path"})
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    listing = subprocess.run(["git", "config", "--file", str(config), "-z", "--list"], env=env,
                             capture_output=True, check=True).stdout.decode()
    by_git = [tuple(e.split("\n", 1)) for e in listing.split("\0") if e]
    ours = config_values(config, wanted)
    assert ours == [e for e in by_git if e[0].split(".")[0] + "." + e[0].split(".")[-1]
                    in wanted]
    assert ("core.hookspath", ".git hooks") in ours and ("include.path", "b.inc") in ours


def test_a_fifo_named_git_does_not_block_the_derivation(tmp_path: Path) -> None:
    # A project's ".git" may be anything; reading it as a gitfile must never wait on a FIFO
    # (the permission decision and the sandbox plan would hang with it).
    import threading

    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "sub" / ".git")
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(git_metadata([tmp_path])),
                              daemon=True)
    worker.start()
    worker.join(10)
    assert done, "git_metadata blocked on a FIFO named .git"


@pytest.mark.parametrize("text", ["x", "[core", "[core]\n\thooksPath", "[core \"a\"",
                                  "[include]\n path", "[core]\nhooksPath =", "[a.b"])
def test_a_config_cut_short_is_read_in_bounded_time(tmp_path: Path, text: str) -> None:
    # A hostile project's config (its own, a nested one, an include target) may end anywhere;
    # the permission decision reads it, so the parser must stop at the end of the text.
    from tests.fifo_support import returns_within

    config = tmp_path / "config"
    config.write_text(text)
    wanted = frozenset({"core.hookspath", "include.path"})
    found = returns_within(lambda: config_values(config, wanted), 5)
    assert found in ([], [("core.hookspath", "")], [("include.path", "")])


def test_a_fifo_config_or_include_target_does_not_block_the_derivation(
        project: Path, make_fifo) -> None:
    from tests.fifo_support import returns_within

    _git(project, "init", "-q")
    _git(project, "config", "include.path", "../team.gitconfig")
    make_fifo(project / "team.gitconfig")
    (project / "nested").mkdir()
    _git(project / "nested", "init", "-q")
    (project / "nested" / ".git" / "config").unlink()
    make_fifo(project / "nested" / ".git" / "config")
    metadata = returns_within(lambda: git_metadata([project]))
    assert metadata.protecting(project / "team.gitconfig") is not None
