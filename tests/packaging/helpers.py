"""Shared names for the packaging tests (the fixtures live in conftest.py)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP_ID = "tebiki"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


@dataclass(frozen=True)
class Build:
    dist: Path
    bundle: Path
    tarball: Path
    output: str  # build.py's `name: value` lines, for the report

    def value(self, name: str) -> str:
        for line in self.output.splitlines():
            if line.startswith(f"{name}: "):
                return line.split(": ", 1)[1]
        raise KeyError(name)


def frozen_env(**extra: str) -> dict[str, str]:
    """The environment a person's desktop would give the app: no venv, no repo on the path."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "QT_QPA_PLATFORM"}}
    env.update(extra)
    return env
