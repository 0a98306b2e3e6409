"""The layers import downward only, without cycles, and importing the core loads no optional library.

The layers: the package `dpaudit` itself (the root `__init__.py`, which imports nothing of dpaudit) with
the project-wide errors, validation and JSON values beside it (`dpaudit.errors`, `dpaudit.validation`,
`dpaudit.json_values`), then mechanisms < execution < attacks < audit < experiments, then modules beside
the folders (`dpaudit.testing`).

The import graph counts every import a module can run: at the top of the module, inside a function or
a class, and `importlib.import_module("dpaudit…")` with a literal name; only imports under
`if TYPE_CHECKING:` are left out, since they never run. An edge goes to the module imported, or, for
`from pkg import name` where `pkg.name` is no module, to the package `pkg`. Importing `pkg.sub` also
runs `pkg/__init__.py`, so the graph has an edge to every package on the way, except the packages that
hold the importing module itself: Python initialises those before the module starts, so an edge to
them can never start an import, and counting it would make every package that imports its own
submodules look like a cycle.
"""

import ast
import subprocess
import sys
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"mechanisms": 0, "execution": 1, "attacks": 2, "audit": 3, "experiments": 4}
FOUNDATION = {"dpaudit.errors", "dpaudit.json_values", "dpaudit.validation"}
IMPORTERS = {"import_module", "__import__"}


def _modules() -> dict[str, tuple[Path, bool]]:
    """Return each dpaudit module's dotted name, with its file and whether it is a package."""
    modules = {}
    for path in ROOT.glob("*.py"):
        package = path.stem == "__init__"
        modules["dpaudit" if package else f"dpaudit.{path.stem}"] = (path, package)
    for folder in LAYERS:
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            package = parts[-1] == "__init__"
            modules[".".join(("dpaudit",) + (parts[:-1] if package else parts))] = (path, package)
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Yield every node of `tree` (as `ast.walk` does) except the bodies of `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend([node.test, *node.orelse])
        else:
            stack.extend(ast.iter_child_nodes(node))


def _base(module: str, is_package: bool, level: int, name: str | None) -> str:
    """Return the absolute module name of a `from` import, resolving a relative one."""
    if level == 0:
        return name or ""
    parts = module.split(".")[: len(module.split(".")) - level + (1 if is_package else 0)]
    return ".".join(parts + ([name] if name else []))


def _imported(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, str | None]]:
    """Yield (module, name) for each import that may run: `import m` gives (m, None), `from m import n` (m, n)."""
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            yield from ((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, is_package, node.level, node.module)
            yield from ((base, alias.name) for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) in IMPORTERS
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value, None


def _edges(module: str, imported: str, name: str | None, modules: dict) -> set[str]:
    """Return the dpaudit modules that `module` runs by importing `name` from `imported`."""
    target = f"{imported}.{name}" if name and f"{imported}.{name}" in modules else imported
    parts = target.split(".")
    ancestors = {".".join(parts[:i]) for i in range(1, len(parts))}
    own = {".".join(module.split(".")[:i]) for i in range(1, len(module.split(".")) + 1)}
    return {m for m in ancestors - own | {target} if m in modules and m != module}


def module_edges(module: str, source: str, is_package: bool, modules: dict) -> set[str]:
    """Return the dpaudit modules (keys of `modules`) that the imports in `source`, the text of `module`, run."""
    imports = _imported(ast.parse(source), module, is_package)
    return set().union(*(_edges(module, m, n, modules) for m, n in imports))


def import_graph(modules: dict[str, tuple[Path, bool]]) -> dict[str, set[str]]:
    """Return, for each module, the dpaudit modules its imports run (see the module docstring)."""
    return {m: module_edges(m, path.read_text(encoding="utf-8"), package, modules) for m, (path, package) in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return the strongly connected components of more than one node (Tarjan), each sorted: every cycle lies in one."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1 or module in FOUNDATION:
        return -1  # the root package, and what every layer may raise and validate with
    return LAYERS.get(parts[1], len(LAYERS))


def test_no_module_imports_a_higher_layer():
    upward = [(m, t) for m, targets in import_graph(_modules()).items() for t in targets if _layer(t) > _layer(m)]
    assert upward == []


def test_the_import_graph_has_no_cycle():
    graph = import_graph(_modules())
    found = cycles(graph)
    edges = [sorted((m, t) for m in component for t in graph[m] if t in component) for component in found]
    assert found == [], edges


def test_the_cycle_finder_finds_cycles_and_only_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": set(), "f": {"f"}, "g": {"d", "h"}, "h": {"g"}}
    assert cycles(graph) == [["a", "b", "c"], ["f"], ["g", "h"]]
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_sees_nested_and_literal_imports_but_not_type_checking_ones():
    source = (
        "from typing import TYPE_CHECKING\n"
        "import importlib\n"
        "from dpaudit.mechanisms import base\n"
        "if TYPE_CHECKING:\n"
        "    from dpaudit.attacks.canary import CanarySet\n"
        "else:\n"
        "    import dpaudit.attacks.observations\n"
        "def f():\n"
        "    from dpaudit.execution.backends import run_dask\n"
        "    return importlib.import_module('dpaudit.experiments.dpsgd')\n"
        "class C:\n"
        "    from . import errors\n"
        "    from .base import Claim\n"
    )
    names = ("dpaudit.mechanisms", "dpaudit.mechanisms.base", "dpaudit.mechanisms.errors", "dpaudit.attacks",
             "dpaudit.attacks.canary", "dpaudit.attacks.observations", "dpaudit.execution",
             "dpaudit.execution.backends", "dpaudit.experiments", "dpaudit.experiments.dpsgd")
    assert module_edges("dpaudit.mechanisms.x", source, False, dict.fromkeys(names)) == set(names) - {
        "dpaudit.mechanisms", "dpaudit.attacks.canary"}


def test_the_root_package_is_in_the_graph_and_imports_nothing():
    modules = _modules()
    assert modules["dpaudit"] == (ROOT / "__init__.py", True)
    assert import_graph(modules)["dpaudit"] == set()


def test_importing_dpaudit_gives_its_version_and_loads_no_subpackage():
    code = ("import sys, importlib.metadata, dpaudit; "
            "print(dpaudit.__version__ == importlib.metadata.version('dpaudit'), "
            "sorted(m for m in sys.modules if m.startswith('dpaudit.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True []"


def test_importing_observations_loads_no_optional_library():
    code = ("import sys, dpaudit.attacks.observations; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'opendp', 'sklearn', 'torch', 'pydp', 'pipeline_dp'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
