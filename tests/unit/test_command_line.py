"""The command line: a folder given as an argument (the desktop entry's ``%F``, "Open with
Tebiki") is the project to open; Qt's own options still reach Qt."""

from __future__ import annotations

from pathlib import Path

from app.command_line import parse_args, qt_argv


def test_a_folder_argument_is_the_project(tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    folder.mkdir()
    assert parse_args([str(folder)]).project == str(folder)


def test_a_file_argument_is_not_a_project(tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("x")
    assert parse_args([str(file)]).project is None


def test_project_option_wins_and_qt_options_pass_through(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert parse_args(["--project", str(a), str(b)]).project == str(a)
    assert qt_argv("tebiki", ["-style", "fusion", str(b)]) == ["tebiki", "-style", "fusion"]
