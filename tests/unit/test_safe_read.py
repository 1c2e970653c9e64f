"""read_project_file: a FIFO, device, socket or symlink never blocks the host; sizes are bounded."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.safe_read import (
    FileMissingError,
    FileTooLargeError,
    NotRegularFileError,
    UnsafeReadError,
    read_project_file,
    read_project_text,
)
from tests.fifo_support import returns_within


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_bytes(b"x = 1\n")
    assert read_project_file(tmp_path / "a.toml") == b"x = 1\n"
    assert read_project_text(tmp_path / "a.toml") == "x = 1\n"


def test_a_fifo_is_refused_at_once(tmp_path: Path, make_fifo: Callable[[Path], Path]) -> None:
    fifo = make_fifo(tmp_path / "tools.toml")
    with pytest.raises(NotRegularFileError, match="FIFO"):
        returns_within(lambda: read_project_file(fifo))


def test_a_symlink_to_a_fifo_is_refused(tmp_path: Path,
                                        make_fifo: Callable[[Path], Path]) -> None:
    fifo = make_fifo(tmp_path / "pipe")
    (tmp_path / "link").symlink_to(fifo)
    with pytest.raises(NotRegularFileError):
        returns_within(lambda: read_project_file(tmp_path / "link"))


def test_a_device_and_a_directory_are_refused(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFileError, match="device"):
        read_project_file("/dev/zero")
    with pytest.raises(NotRegularFileError, match="directory"):
        read_project_file(tmp_path)


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        with pytest.raises(NotRegularFileError):
            read_project_file(path)
    finally:
        server.close()


def test_symlinks_are_refused_when_they_must_not_be_followed(tmp_path: Path) -> None:
    (tmp_path / "real").write_text("secret")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert read_project_file(tmp_path / "link") == b"secret"
    with pytest.raises(NotRegularFileError, match="symbolic link"):
        read_project_file(tmp_path / "link", follow_symlinks=False)


def test_size_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"a" * 100)
    with pytest.raises(FileTooLargeError, match="larger than 10 bytes"):
        read_project_file(tmp_path / "big", max_bytes=10)
    assert read_project_file(tmp_path / "big", max_bytes=10, too_large="truncate") == b"a" * 10


def test_missing_file_is_a_typed_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileMissingError) as info:
        read_project_file(tmp_path / "nope")
    assert isinstance(info.value, OSError) and isinstance(info.value, UnsafeReadError)
    assert "does not exist" in str(info.value)


def test_a_fifo_tools_toml_is_reported_not_waited_on(tmp_path: Path,
                                                     make_fifo: Callable[[Path], Path]) -> None:
    from app.core.tools.providers.custom.loading import load_tools_file

    fifo = make_fifo(tmp_path / ".tebiki" / "tools.toml")
    tools, problems = returns_within(lambda: load_tools_file(fifo))
    assert tools == [] and len(problems) == 1 and "FIFO" in problems[0]


def test_a_dropped_fifo_is_refused_as_an_attachment(tmp_path: Path,
                                                    make_fifo: Callable[[Path], Path]) -> None:
    from app.core.agent.attachments import AttachmentError, read_attachment

    fifo = make_fifo(tmp_path / "notes.txt")
    with pytest.raises(AttachmentError, match="not a file"):
        returns_within(lambda: read_attachment(fifo))
