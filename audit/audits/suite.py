"""Audit suites: every registered mechanism audited, each verdict checked against what is known of it."""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import pathlib
from collections.abc import Iterator, Sequence
from typing import Any, Callable

from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.results.render import fmt
from dpaudit.audit.results.result import AuditResult
from dpaudit.mechanisms.registry import get_mechanism, list_mechanisms, registration

__all__ = ["COLUMNS", "TRIALS", "SuiteRow", "SuiteTable", "cells", "run_suite", "select", "write"]

TRIALS = {"quick": 1_000_000, "full": 10_000_000}
"""The suite's trial budgets; each mechanism takes its registered multiple of it (`Registration.suite_trials`)."""


@dataclasses.dataclass(frozen=True)
class SuiteRow:
    """One audited mechanism with the verdict its registration expects (None when nothing is known)."""

    result: AuditResult
    relation: str
    expected: str | None

    @property
    def as_expected(self) -> bool:
        """Return False when a correct mechanism is flagged or a buggy one is missed."""
        return self.expected is None or self.expected == self.result.verdict

    def to_dict(self) -> dict[str, Any]:
        """Return the audit's JSON with the relation and expectation added."""
        return {**self.result.to_dict(), "relation": self.relation, "expected": self.expected,
                "as_expected": self.as_expected}


@dataclasses.dataclass(frozen=True)
class SuiteTable(Sequence[SuiteRow]):
    """The rows of one suite run, in order: a sequence of `SuiteRow` that shows itself as a table in Jupyter."""

    rows: tuple[SuiteRow, ...]

    def __getitem__(self, index: int | slice) -> SuiteRow | tuple[SuiteRow, ...]:
        return self.rows[index]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[SuiteRow]:
        return iter(self.rows)

    @property
    def unexpected(self) -> list[str]:
        """Return the mechanisms whose verdict is not the one expected of them, in order."""
        return [row.result.mechanism for row in self.rows if not row.as_expected]

    def _repr_html_(self) -> str:
        """Return the suite as HTML for Jupyter: whether every verdict was the expected one, then the table of `cells`."""
        from dpaudit.audit.results.notebook import table_html

        bad = self.unexpected
        verdict = f"unexpected verdicts: {', '.join(bad)}" if bad else f"every verdict as expected ({len(self)} mechanisms)"
        return table_html(title="dpaudit suite", verdict=verdict, flagged=bool(bad), columns=COLUMNS,
                          rows=[cells(row) for row in self.rows])


def select(mode: str, only: str | None = None) -> list[tuple[str, int]]:
    """Return (mechanism name, trials) pairs for the suite `mode`, filtered by the glob `only`.

    A mechanism that runs in a library environment of its own is in only
    when `only` names it and its environment is built (the suite builds
    none: `dpaudit env create NAME` opts its rows in), so the whole suite
    (`make demo`) takes the same minutes whichever environments exist.
    """
    names = [n for n in list_mechanisms() if (only is None or fnmatch.fnmatch(n, only)) and _in_suite(n, only)]
    return [(n, int(TRIALS[mode] * registration(n).suite_trials)) for n in names]


def _in_suite(name: str, only: str | None) -> bool:
    """Return whether mechanism `name` is audited by a suite filtered by `only` (see `select`)."""
    entry = registration(name)
    return entry.ready() and (only is not None or entry.environment is None)


def run_suite(
    entries: Sequence[tuple[str, int]],
    *,
    seed: int = 0,
    confidence: float = 0.95,
    on_row: Callable[[SuiteRow], None] | None = None,
) -> SuiteTable:
    """Audit each (name, trials) entry at its default parameters; return the rows in order, as a `SuiteTable`."""
    rows = []
    for name, trials in entries:
        mech = get_mechanism(name)
        result = audit_mechanism(mech, trials=trials, seed=seed, confidence=confidence)
        row = SuiteRow(result, mech.claim.relation.value, registration(name).expected)
        rows.append(row)
        if on_row:
            on_row(row)
    return SuiteTable(tuple(rows))


COLUMNS = ("mechanism", "relation", "claim ε", "claim δ", "upper", "lower", "tightness",
           "verdict", "expected", "ok", "trials", "seconds")


def cells(row: SuiteRow) -> list[str]:
    """Return the table cells of one row, in the order of COLUMNS."""
    r = row.result
    return [
        r.mechanism, row.relation, f"{r.claim.epsilon:g}", f"{r.claim.delta:g}", fmt(r.upper_bound.epsilon, decimals=3),
        fmt(r.lower_bound.epsilon, decimals=3), fmt(r.tightness, decimals=3), r.verdict, row.expected or "?",
        "yes" if row.as_expected else "NO", f"{r.lower_bound.trials:,}", f"{r.seconds:.1f}",
    ]


def _to_markdown(rows: Sequence[SuiteRow]) -> str:
    """Return the suite as a Markdown table."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def write(rows: Sequence[SuiteRow], out: pathlib.Path) -> None:
    """Write `suite.md` and `suite.json` into the folder `out`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "suite.md").write_text(_to_markdown(rows))
    (out / "suite.json").write_text(json.dumps([r.to_dict() for r in rows], indent=2))
