"""app/core never imports Qt: checked statically and by importing every core module."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "app" / "core"
FORBIDDEN = ("PySide6", "PyQt5", "PyQt6", "qasync", "shiboken6")


def test_core_sources_do_not_import_qt():
    offenders = []
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__":
                names = [a.value for a in node.args if isinstance(a, ast.Constant)]
            offenders += [f"{path}:{node.lineno} {n}" for n in names
                          if str(n).split(".")[0] in FORBIDDEN]
    assert offenders == []


def test_importing_all_of_core_loads_no_qt():
    modules = sorted(
        ".".join(p.relative_to(CORE.parents[1]).with_suffix("").parts).removesuffix(".__init__")
        for p in CORE.rglob("*.py"))
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}]\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=CORE.parents[1], timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(modules) > 10
