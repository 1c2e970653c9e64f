"""Frozen ignore rules: git asked with them says what git's own status says with the same
``.gitignore`` files, and a FIFO or symlink ``.gitignore`` counts as absent."""

from __future__ import annotations

import os
from pathlib import Path

from app.core.checkpoints.frozen_rules import freeze, frozen_status
from app.core.checkpoints.shadow_repo import BUILTIN_EXCLUDES, ShadowRepo

RULES = {
    ".gitignore": "*.log\n/top-only.txt\nbuild/\n!keep.log\n# a comment\n\\#hash\n",
    "sub/.gitignore": "*.tmp\nanchored/x.txt\n/only-here.txt\ndeep/\n!important.tmp\n",
    "sub/inner/.gitignore": "*.dat\n!keep.log\n",
    "we[i]rd*/.gitignore": "*.bin\n",
    "bom/.gitignore": "\ufeff*.bak\r\nkeep/\r\n",
    "new\nline/.gitignore": "*.o\n",
}
FILES = [
    "a.log", "keep.log", "top-only.txt", "sub/top-only.txt", "build/o", "sub/build/o", "#hash",
    "sub/a.tmp", "sub/important.tmp", "sub/inner/b.tmp", "sub/anchored/x.txt",
    "sub/inner/anchored/x.txt", "sub/only-here.txt", "sub/inner/only-here.txt",
    "sub/deep/f", "sub/inner/deep/f", "sub/inner/c.dat", "c.dat", "sub/inner/keep.log",
    "sub/inner/z.log", "we[i]rd*/a.bin", "weird/a.bin", "plain.txt", "node_modules/m.js",
    "bom/x.bak", "bom/keep/k", "bom/y.txt", "new\nline/a.o", "new\nline/a.c",
]


def make(root: Path) -> ShadowRepo:
    for rel, text in RULES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, newline="")
    for rel in FILES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    repo = ShadowRepo(root.parent / "shadow", root)
    repo.initialize()
    return repo


def test_frozen_rules_say_what_git_says_with_the_same_files(project: Path) -> None:
    repo = make(project)
    own = repo.status(ignored=True)
    rules = freeze(project, [r.encode() for r in RULES])
    frozen = frozen_status(repo, rules, BUILTIN_EXCLUDES)
    assert b"bom/x.bak" in own.ignored and b"new\nline/a.o" in own.ignored
    assert sorted(frozen.changed) == sorted(own.changed)
    assert sorted(frozen.ignored) == sorted(own.ignored)
    assert (b"sub/inner/keep.log", False) in frozen.changed  # a deeper negation wins
    assert b"sub/inner/only-here.txt" not in frozen.ignored  # anchored to its folder


def test_after_an_edit_the_frozen_rules_still_hold(project: Path) -> None:
    repo = make(project)
    rules = freeze(project, [r.encode() for r in RULES])
    expected = frozen_status(repo, rules, BUILTIN_EXCLUDES)
    (project / ".gitignore").write_text("plain.txt\n")
    (project / "sub" / ".gitignore").unlink()
    (project / "new").mkdir()
    (project / "new" / ".gitignore").write_text("*\n")
    assert not rules.same_as_now(project, [b".gitignore", b"new/.gitignore"])
    now = frozen_status(repo, rules, BUILTIN_EXCLUDES)
    assert sorted(now.ignored) == sorted(expected.ignored)
    gone = (b"sub/.gitignore", False)  # deleted: an untracked file no longer there
    assert sorted(now.changed) == sorted(
        [*(c for c in expected.changed if c != gone), (b"new/.gitignore", False)])


def test_special_and_linked_rule_files_count_as_absent(project: Path,
                                                       tmp_path: Path) -> None:
    os.mkfifo(project / ".gitignore")
    (tmp_path / "elsewhere").write_text("*\n")
    (project / "sub").mkdir()
    (project / "sub" / ".gitignore").symlink_to(tmp_path / "elsewhere")
    rules = freeze(project, [b".gitignore", b"sub/.gitignore"])  # returns: no blocking open
    assert rules.files == {}
