"""Rendering of result objects: a two-column rich table and its plain-text form."""

from __future__ import annotations

import io
import math
from typing import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def key_value_table(title: str, rows: Sequence[tuple[str, str]], caption: str) -> Table:
    """Return a header-less table of (key, value) rows; text is escaped, so "[pld]" stays visible."""
    table = Table(title=escape(title), show_header=False, caption=escape(caption))
    for key, value in rows:
        table.add_row(escape(key), escape(value))
    return table


def plain_text(table: Table, width: int = 100) -> str:
    """Return `table` rendered as plain text."""
    buffer = io.StringIO()
    Console(file=buffer, width=width, force_terminal=False).print(table)
    return buffer.getvalue()


def fmt(x: float | None) -> str:
    """Return a number for a table: 4 significant digits, ∞, or n/a."""
    if x is None:
        return "n/a"
    return "∞" if math.isinf(x) else f"{x:.4g}"
