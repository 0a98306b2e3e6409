"""The worked notebook (docs/notebooks/audit_walkthrough.ipynb) runs top to bottom, and each audit in it shows itself."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "notebooks" / "audit_walkthrough.ipynb"


def _shows_a_value(source: str) -> bool:
    """Return True when a cell ends in an expression that Jupyter displays (anything but a call of print)."""
    body = ast.parse(source).body
    last = body[-1] if body else None
    if not isinstance(last, ast.Expr):
        return False
    call = last.value
    return not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "print")


def _html(cell: nbformat.NotebookNode) -> list[str]:
    return [output.data["text/html"] for output in cell.outputs if "text/html" in output.get("data", {})]


def test_the_notebook_is_stored_without_outputs():
    code = [cell for cell in nbformat.read(NOTEBOOK, as_version=4).cells if cell.cell_type == "code"]
    assert code and all(cell.outputs == [] and cell.execution_count is None for cell in code)


def test_the_notebook_runs_top_to_bottom_and_each_result_shows_its_verdict_table_and_plot(tmp_path):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = [cell for cell in notebook.cells if cell.cell_type == "code" and _shows_a_value(cell.source)]
    assert len(shown) >= 3
    for cell in shown:
        [page] = _html(cell)
        assert 'class="dpaudit-result"' in page and "Verdict: " in page and "<table>" in page, cell.source
    assert sum('src="data:image/png;base64,' in page for cell in shown for page in _html(cell)) >= 3
