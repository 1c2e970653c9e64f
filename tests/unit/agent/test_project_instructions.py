"""The project's instructions files (AGENTS.md, CLAUDE.md, .tebiki/instructions.md and the
person's own): read in order, capped each and in all (the cut said), never blocking or crashing
on what a project holds (a FIFO, a link out of it, a huge file, bad UTF-8), re-read on change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.agent.project_instructions import (
    InstructionsLoader,
    describe,
    personal_instructions_path,
)
from tests.fifo_support import Fifos, make_fifo, returns_within  # noqa: F401  (fixture)


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_project_files_in_order_after_the_personal_one(tmp_path: Path):
    project, data = tmp_path / "site", tmp_path / "data"
    _write(project / ".tebiki" / "instructions.md", "tebiki rules")
    _write(project / "CLAUDE.md", "claude rules")
    _write(project / "AGENTS.md", "agents rules")
    _write(personal_instructions_path(data), "my own rules")

    files = InstructionsLoader(personal_instructions_path(data)).load(project)

    assert [(f.name, f.personal, f.text) for f in files] == [
        ("instructions.md", True, "my own rules"),
        ("AGENTS.md", False, "agents rules"),
        ("CLAUDE.md", False, "claude rules"),
        (".tebiki/instructions.md", False, "tebiki rules"),
    ]
    assert all(f.cut_at is None and not f.problem for f in files)


def test_no_files_no_instructions(tmp_path: Path):
    assert InstructionsLoader(tmp_path / "data" / "instructions.md").load(tmp_path) == ()


def test_each_file_is_capped_and_says_so(tmp_path: Path):
    _write(tmp_path / "AGENTS.md", "a" * 100)
    _write(tmp_path / "CLAUDE.md", "b" * 10)

    agents, claude = InstructionsLoader(max_file_bytes=40).load(tmp_path)

    assert agents.text == "a" * 40 and agents.cut_at == 40 and agents.size == 100
    assert "larger than 40 bytes" in agents.cut_reason
    assert describe(agents) == "AGENTS.md (cut at 40 bytes)"
    assert claude.text == "b" * 10 and claude.cut_at is None
    assert describe(claude) == "CLAUDE.md (10 bytes)"


def test_the_total_is_capped_later_files_cut_or_left_out(tmp_path: Path):
    _write(tmp_path / "AGENTS.md", "a" * 30)
    _write(tmp_path / "CLAUDE.md", "b" * 30)
    _write(tmp_path / ".tebiki" / "instructions.md", "c" * 30)

    agents, claude, tebiki = InstructionsLoader(max_file_bytes=40,
                                                max_total_bytes=50).load(tmp_path)

    assert agents.text == "a" * 30 and agents.cut_at is None
    assert claude.text == "b" * 20 and claude.cut_at == 20
    assert "together are limited to 50 bytes" in claude.cut_reason
    assert tebiki.text == "" and tebiki.cut_at == 0 and not tebiki.included
    assert describe(tebiki).startswith(".tebiki/instructions.md (left out:")


def test_the_default_caps_are_32_kb_each_and_64_kb_in_all(tmp_path: Path):
    for name in ("AGENTS.md", "CLAUDE.md", ".tebiki/instructions.md"):
        _write(tmp_path / name, "x" * (40 * 1024))

    files = InstructionsLoader().load(tmp_path)

    assert [len(f.text) for f in files] == [32 * 1024, 32 * 1024, 0]
    assert describe(files[0]) == "AGENTS.md (cut at 32 KB)"


def test_a_huge_file_is_not_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    huge = tmp_path / "AGENTS.md"
    with huge.open("wb") as out:  # sparse: 4 GB on paper, nothing on disk
        out.truncate(4 << 30)
    read: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        chunk = real_read(fd, n)
        read.append(len(chunk))
        return chunk

    monkeypatch.setattr(os, "read", counting_read)

    (agents,) = returns_within(lambda: InstructionsLoader().load(tmp_path))

    assert agents.cut_at == 32 * 1024 and agents.size == 4 << 30
    assert sum(read) < 33 * 1024  # the cap and a byte or two to know it is larger


def test_bad_utf8_is_replaced_not_raised(tmp_path: Path):
    _write(tmp_path / "AGENTS.md", b"use \xff\xfe tabs\n")

    (agents,) = InstructionsLoader().load(tmp_path)

    assert agents.text == "use \ufffd\ufffd tabs\n"


def test_a_cut_inside_a_character_drops_it(tmp_path: Path):
    _write(tmp_path / "AGENTS.md", "ab" + "é" * 10)  # é is two bytes

    (agents,) = InstructionsLoader(max_file_bytes=5).load(tmp_path)

    assert agents.text == "abé"


def test_a_fifo_never_blocks(tmp_path: Path, make_fifo: Fifos):  # noqa: F811
    make_fifo(tmp_path / "AGENTS.md")
    _write(tmp_path / "CLAUDE.md", "claude rules")

    agents, claude = returns_within(lambda: InstructionsLoader().load(tmp_path))

    assert agents.problem and not agents.included and agents.text == ""
    assert describe(agents) == "AGENTS.md (not read: not a regular file)"
    assert claude.text == "claude rules"


def test_a_link_out_of_the_project_is_not_followed(tmp_path: Path):
    project = tmp_path / "site"
    outside = _write(tmp_path / "elsewhere" / "secret.txt", "SECRET")
    project.mkdir()
    (project / "AGENTS.md").symlink_to(outside)
    (project / ".tebiki").symlink_to(outside.parent, target_is_directory=True)
    _write(outside.parent / "instructions.md", "SECRET TOO")

    files = InstructionsLoader().load(project)

    assert [f.name for f in files] == ["AGENTS.md", ".tebiki/instructions.md"]
    assert all(f.text == "" and "outside the project" in f.problem for f in files)


def test_a_link_inside_the_project_is_read_once(tmp_path: Path):
    _write(tmp_path / "AGENTS.md", "shared rules")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")

    files = InstructionsLoader().load(tmp_path)

    assert [(f.name, f.text) for f in files] == [("AGENTS.md", "shared rules")]


def test_a_dangling_link_or_a_directory_is_no_crash(tmp_path: Path):
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / "gone.md")
    (tmp_path / "CLAUDE.md").mkdir()

    files = InstructionsLoader().load(tmp_path)

    assert [(f.name, f.included) for f in files] == [("CLAUDE.md", False)]


def test_a_changed_file_is_read_again_an_unchanged_one_is_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from app.core.agent import project_instructions as module

    agents = _write(tmp_path / "AGENTS.md", "first")
    reads: list[Path] = []
    real = module.read_project_file

    def counting(path, **kwargs):
        reads.append(Path(path))
        return real(path, **kwargs)

    monkeypatch.setattr(module, "read_project_file", counting)
    loader = InstructionsLoader()

    assert loader.load(tmp_path)[0].text == "first"
    assert loader.load(tmp_path)[0].text == "first"
    assert len(reads) == 1
    agents.write_text("second, longer", encoding="utf-8")
    assert loader.load(tmp_path)[0].text == "second, longer"
    assert len(reads) == 2


def test_sizes_for_a_person():
    from app.core.agent.project_instructions import describe_size

    assert describe_size(812) == "812 bytes"
    assert describe_size(2150) == "2.1 KB"
    assert describe_size(32 * 1024) == "32 KB"
    assert describe_size(3 << 20) == "3 MB"
