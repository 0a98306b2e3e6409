"""No function of the package is longer than 80 lines (its docstring included): one idea per function."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("mechanisms", "attacks", "audit", "experiments")
LIMIT = 80


def _package_files() -> list[Path]:
    """Return the package's Python files: the root modules and the four folders (scripts run elsewhere included)."""
    return sorted(ROOT.glob("*.py")) + sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))


def long_functions(source: str, limit: int = LIMIT) -> list[tuple[str, int]]:
    """Return (name, lines) of every function or method in `source` longer than `limit` lines."""
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > limit]


def test_the_length_check_sees_a_long_function():
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    assert long_functions(f"def f():\n{body}\n") == [("f", LIMIT + 1)]
    assert long_functions("def g():\n    return 1\n") == []


def test_no_function_of_the_package_is_longer_than_80_lines():
    found = [f"{path.relative_to(ROOT)}:{name} ({lines} lines)" for path in _package_files()
             for name, lines in long_functions(path.read_text(encoding="utf-8"))]
    assert found == []
