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


# -- no import cycles among app modules ---------------------------------------------------------
# pyproject's import-linter contracts order the packages; a cycle inside one package slips past
# them, so the module graph itself is checked here (grimp ships with import-linter).

# Cycles that exist today, each closed by an import deferred into a function. Listed so that any
# other cycle fails; delete an entry once its cycle is gone.
KNOWN_CYCLES: set[frozenset[str]] = set()


def import_cycles(graph) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[frozenset[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(
                        graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(frozenset(component))
    return cycles


def test_cycle_finder_finds_a_cycle_and_ignores_a_chain():
    import grimp

    graph = grimp.ImportGraph()
    for importer, imported in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e")]:
        graph.add_import(importer=importer, imported=imported)
    assert import_cycles(graph) == [frozenset({"a", "b", "c"})]


def test_app_has_no_import_cycles_but_the_known_ones():
    import grimp

    # Imports under `if TYPE_CHECKING:` never run, so they cannot make a cycle at run time.
    # Imports inside functions count: deferring one hides a cycle, it does not remove it.
    graph = grimp.build_graph("app", exclude_type_checking_imports=True, cache_dir=None)
    new = [sorted(cycle) for cycle in import_cycles(graph) if cycle not in KNOWN_CYCLES]
    assert new == []


def test_the_ui_has_no_import_cycles_even_through_annotations():
    import grimp

    # A part that names its owner as a type, even under `if TYPE_CHECKING:`, is as tied to it
    # as one that imports it: the UI's parts say what they need as protocols instead
    # (app/ui/ai_panel/ports.py), so the UI's import graph stays a tree of layers.
    graph = grimp.build_graph("app", exclude_type_checking_imports=False, cache_dir=None)
    ui = [sorted(cycle) for cycle in import_cycles(graph)
          if any(module.startswith("app.ui") for module in cycle)]
    assert ui == []


def test_ui_classes_have_one_base_at_most():
    # A widget too big for one module is split into collaborators (own state, explicit
    # constructor), not into mixins: apart from Generic and Protocol, a class of app/ui names
    # one base class, its Qt class (AIPanel is a QWidget, MainWindow a QMainWindow).
    def counted(base: ast.expr) -> bool:
        name = base.value if isinstance(base, ast.Subscript) else base
        return not (isinstance(name, ast.Name) and name.id in ("Generic", "Protocol"))

    offenders = []
    for path in (CORE.parent / "ui").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        offenders += [f"{path}:{node.lineno} {node.name}" for node in ast.walk(tree)
                      if isinstance(node, ast.ClassDef)
                      and sum(counted(base) for base in node.bases) > 1]
    assert offenders == []
