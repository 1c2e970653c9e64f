"""The default data folder: on Linux the XDG base directory rule, computed without importing
platformdirs (~4 ms of every start); platformdirs itself is the reference it must agree with."""

from __future__ import annotations

import sys

import platformdirs
import pytest

from app.core.config import APP_NAME, resolve_paths, user_data_dir
from tests.unit.test_startup_path import _run

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG rule")


@linux_only
@pytest.mark.parametrize("xdg", [None, "", "   ", "/srv/data", "relative/data"])
@pytest.mark.parametrize("home", ["", "/"])
def test_the_default_folder_is_the_one_platformdirs_gives(monkeypatch, tmp_path, xdg, home):
    monkeypatch.setenv("HOME", str(tmp_path) + home)
    if xdg is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
    monkeypatch.delenv("TEBIKI_DATA_DIR", raising=False)
    expected = platformdirs.user_data_dir(APP_NAME, appauthor=False)
    assert user_data_dir() == expected
    assert resolve_paths().data_dir == resolve_paths(expected).data_dir


@linux_only
def test_starting_with_the_default_folder_does_not_import_platformdirs(tmp_path):
    # _run sets TEBIKI_DATA_DIR; unset here, the default folder (under this HOME) is used.
    result = _run(f"""
        import json, os, sys
        os.environ.pop("TEBIKI_DATA_DIR")
        os.environ["HOME"] = {str(tmp_path)!r}
        os.environ.pop("XDG_DATA_HOME", None)
        import app.main
        _args, paths = app.main.prepare_start([])
        print(json.dumps({{"platformdirs": "platformdirs" in sys.modules,
                          "data_dir": str(paths.data_dir)}}))
    """, tmp_path)
    assert result == {"platformdirs": False,
                      "data_dir": str(tmp_path / ".local" / "share" / APP_NAME)}
