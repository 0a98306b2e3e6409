"""Rendering of result objects: a two-column rich table and its plain-text form (rich is imported when one is drawn)."""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from dpaudit.audit.theory.upper_bound import UpperBound
    from rich.table import Table

__all__ = ["NO_THEORY", "fact_name", "fmt", "guesses_text", "key_value_table", "plain_text", "upper_bound_text"]

NO_THEORY = ("claim", "unknown")
"""Methods of an upper bound that theory did not give: the claim itself (a black box), or ∞ (an unknown event).
Beside them a lower bound has no tightness, and the table says that no upper bound is known."""

FACT_NAMES = {
    "canary_magnitudes": "canary magnitudes (the scale of each crafted canary, chosen on runs outside the game "
                         "so that its gradient reaches the clip norm)",
}
"""How the table names an attack's facts that their key alone does not explain."""


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


def upper_bound_text(upper: UpperBound | None, *, at_delta: bool = True) -> str:
    """Return the upper bound's cell: ε at δ [method], or that none is known when theory gave only the claim or ∞."""
    if upper is None:
        return "n/a"
    if upper.method in NO_THEORY:
        return "none known (a black box: only its claim)" if upper.method == "claim" else "none known (no theory for its event)"
    where = f" at δ = {upper.delta:g}" if at_delta else ""
    return f"ε = {fmt(upper.epsilon)}{where} [{upper.method}]"


def fact_name(key: str) -> str:
    """Return the table's name of an attack's fact `key` (its words, with what it means where the words do not say)."""
    return FACT_NAMES.get(key, key.replace("_", " "))


def guesses_text(canaries: int, guesses: int, correct: int, epsilon: float) -> str:
    """Return the cell of canaries, guesses and correct ones; where a positive bound comes from guesses barely
    better than a coin overall, it says that the bound reads the extreme scores (the tail), where the leak is."""
    text = f"{canaries:,} / {guesses:,} / {correct:,}"
    if epsilon > 0 and guesses and correct < 0.75 * guesses:
        text += " (the bound reads the extreme scores, where the leak shows; this count is over every guess)"
    return text
