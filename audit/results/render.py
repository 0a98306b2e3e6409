"""Rendering of result objects: a two-column rich table and its plain-text form (rich is imported when one is drawn)."""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["fmt", "key_value_table", "plain_text"]


def key_value_table(title: str, rows: Sequence[tuple[str, str]], caption: str) -> Table:
    """Return a header-less table of (key, value) rows; text is escaped, so "[pld]" stays visible."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=escape(title), show_header=False, caption=escape(caption))
    for key, value in rows:
        table.add_row(escape(key), escape(value))
    return table


def plain_text(table: Table, width: int = 100) -> str:
    """Return `table` rendered as plain text, in Jupyter too (where rich would otherwise display it and return "")."""
    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, width=width, force_terminal=False, force_jupyter=False).print(table)
    return buffer.getvalue()


def fmt(x: float | None, *, decimals: int | None = None) -> str:
    """Return a number for a table: n/a for None, ∞, else `decimals` fixed decimals or 4 significant digits.

    With `decimals`, numbers below 10^−3 (but not 0) keep 4 significant
    digits instead, so a small bound never prints as 0.000.
    """
    if x is None:
        return "n/a"
    if math.isinf(x):
        return "∞"
    if decimals is None or (0 < abs(x) < 1e-3):
        return f"{x:.4g}"
    return f"{x:.{decimals}f}"
