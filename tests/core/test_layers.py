"""The layers import downward only, without cycles, and importing the core loads no optional library."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = {"mechanisms": 0, "attacks": 1, "audit": 2, "experiments": 3}


def _module_imports() -> dict[str, set[str]]:
    """Return each dpaudit module's top-level imports of other dpaudit modules."""
    modules = {}
    for folder in LAYERS:
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(("dpaudit",) + (parts[:-1] if parts[-1] == "__init__" else parts))
            modules[name] = path
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        graph[name] = {target for target in found if target in modules and target != name}
    return graph


def _layer(module: str) -> int:
    return LAYERS[module.split(".")[1]]


def test_no_module_imports_a_higher_layer():
    upward = [(m, t) for m, targets in _module_imports().items() for t in targets if _layer(t) > _layer(m)]
    assert upward == []


def test_the_import_graph_has_no_cycle():
    graph, state, cycles = _module_imports(), {}, []

    def visit(node, path):
        state[node] = "open"
        for target in graph[node]:
            if state.get(target) == "open":
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[node] = "done"

    for node in graph:
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_importing_observations_loads_no_optional_library():
    code = ("import sys, dpaudit.attacks.observations; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'opendp', 'sklearn', 'torch', 'pydp', 'pipeline_dp'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
