"""Where Tebiki keeps its data and which project it opens, from flags, environment and defaults.

- ``TEBIKI_DATA_DIR`` (or ``--data-dir``): the data folder; default is the platform's user data
  dir (``$XDG_DATA_HOME/Tebiki``, else ``~/.local/share/Tebiki``, on Linux).
- ``TEBIKI_PROJECT_ROOT`` (or ``--project``): the project folder opened at start.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "Tebiki"
APP_ID = "tebiki"
DATABASE_FILENAME = "tebiki.sqlite3"


@dataclass(frozen=True)
class AppPaths:
    data_dir: Path

    @property
    def database(self) -> Path:
        return self.data_dir / DATABASE_FILENAME

    @property
    def log_file(self) -> Path:
        return self.data_dir / "tebiki.log"


def resolve_paths(data_dir: str | os.PathLike[str] | None = None) -> AppPaths:
    chosen = data_dir or os.environ.get("TEBIKI_DATA_DIR") or user_data_dir()
    return AppPaths(Path(os.path.expanduser(os.fspath(chosen))).resolve())


def user_data_dir() -> str:
    """The platform's folder for the app's data. On Linux the XDG base directory rule, as
    platformdirs has it, without importing platformdirs: its import was ~4 ms of every start.
    Anything else (another platform, a HOME that is not an absolute path) platformdirs says."""
    if sys.platform.startswith("linux"):
        xdg = os.environ.get("XDG_DATA_HOME", "")
        if os.path.isabs(xdg):  # a relative value is ignored, as the rule says
            return os.path.join(xdg, APP_NAME)
        if os.path.isabs(os.environ.get("HOME", "")):
            return os.path.join(os.path.expanduser("~/.local/share"), APP_NAME)
    import platformdirs

    return platformdirs.user_data_dir(APP_NAME, appauthor=False)


def resolve_project_root(project: str | os.PathLike[str] | None = None) -> Path | None:
    """The project folder to open, or None when none is configured or it does not exist."""
    chosen = project or os.environ.get("TEBIKI_PROJECT_ROOT")
    if not chosen:
        return None
    path = Path(os.path.expanduser(os.fspath(chosen))).resolve()
    return path if path.is_dir() else None
