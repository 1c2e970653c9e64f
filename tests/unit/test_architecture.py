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


def test_app_has_no_import_cycles_even_through_annotations():
    import grimp

    # Imports inside functions count: deferring one hides a cycle, it does not remove it. So do
    # imports under `if TYPE_CHECKING:`: they never run, but a part that names its owner as a
    # type is as tied to it as one that imports it. Parts say what they need as protocols
    # instead (app/ui/ai_panel/ports.py, McpTool's McpToolCalls, ProjectFollower's
    # FollowingServer), or are handed callbacks, so the import graph stays a tree of layers.
    graph = grimp.build_graph("app", exclude_type_checking_imports=False, cache_dir=None)
    assert [sorted(cycle) for cycle in import_cycles(graph)] == []


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


def app_bases(tree: ast.Module) -> dict[ast.ClassDef, list[str]]:
    """Each class of a module with those of its bases that are classes of the app itself:
    defined in the module, or named through an import from ``app`` (``from app.x import A``,
    ``from app.x import m`` then ``m.A``, ``import app.x``)."""
    local = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    from_app: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "")
                                                 .split(".")[0] == "app"):
            from_app.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            from_app.update(alias.asname or alias.name.split(".")[0] for alias in node.names
                            if alias.name.split(".")[0] == "app")

    def of_the_app(base: ast.expr) -> bool:
        if isinstance(base, ast.Subscript):  # Base[T]
            base = base.value
        if isinstance(base, ast.Name):
            return base.id in local or base.id in from_app
        while isinstance(base, ast.Attribute):
            base = base.value
        return isinstance(base, ast.Name) and base.id in from_app

    return {node: [ast.unparse(base) for base in node.bases if of_the_app(base)]
            for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}


def test_app_bases_are_found_through_imports_and_the_module_itself():
    tree = ast.parse(
        "import typing\nimport app.core.a\nfrom app.core import b as bee\n"
        "from app.core.c import C\nfrom .d import D\nfrom logging import Handler\n"
        "class Own: ...\n"
        "class Mixed(Own, C, bee.B, D, app.core.a.A, Handler, typing.Generic[T], Exception): ...\n")
    found = {node.name: bases for node, bases in app_bases(tree).items()}
    assert found == {"Own": [], "Mixed": ["Own", "C", "bee.B", "D", "app.core.a.A"]}


def test_core_classes_have_one_base_of_the_app_at_most():
    # A class too big for one module is split into collaborators (own state, explicit
    # constructor, handed what they need as callbacks or a protocol), never into mixins that
    # each hold part of it. So a class of app/core derives from one class of the app at most;
    # stdlib and third-party bases (Exception, logging.Handler, httpx transports, the MCP SDK's
    # OAuthClientProvider) do not count. A protocol joining protocols has nothing to split and
    # is allowed.
    offenders = []
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, bases in app_bases(tree).items():
            protocol = any(isinstance(base, ast.Name) and base.id == "Protocol"
                           for base in node.bases)
            if len(bases) > 1 and not protocol:
                offenders.append(f"{path}:{node.lineno} {node.name}({', '.join(bases)})")
    assert offenders == []
