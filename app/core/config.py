"""Where Tebiki keeps its data and which project it opens, from flags, environment and defaults.

- ``TEBIKI_DATA_DIR`` (or ``--data-dir``): the data folder; default is the platform's user data
  dir (``~/.local/share/Tebiki`` on Linux).
- ``TEBIKI_PROJECT_ROOT`` (or ``--project``): the project folder opened at start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

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
    chosen = data_dir or os.environ.get("TEBIKI_DATA_DIR") or platformdirs.user_data_dir(
        APP_NAME, appauthor=False)
    return AppPaths(Path(os.path.expanduser(os.fspath(chosen))).resolve())


def resolve_project_root(project: str | os.PathLike[str] | None = None) -> Path | None:
    """The project folder to open, or None when none is configured or it does not exist."""
    chosen = project or os.environ.get("TEBIKI_PROJECT_ROOT")
    if not chosen:
        return None
    path = Path(os.path.expanduser(os.fspath(chosen))).resolve()
    return path if path.is_dir() else None
