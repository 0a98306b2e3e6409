"""Declared table domains and the worst-case pair of a synthetic-data audit: a target that no other record resembles.

Annamalai, Ganev and De Cristofaro ("What do you want from theory alone?
Experimenting with tight auditing of differentially private synthetic data
generation", USENIX Security 2024) audit a generator on a small dataset
and a target record that is an outlier in every marginal the generator
measures: no other record shares any of its attribute values, so every
marginal cell the target falls in holds the target alone, and its presence
moves each measured count by the full sensitivity. Here the domain is
declared (each column's number of categories, values 0 .. k − 1), never
read from the data; the base dataset is `rows` records at category 0 in
every column, the target takes the last category of every column, and the
pair is (base, base with the target added): add-remove neighbours.

A record is a vector of one integer code per column; a dataset is an
(n, columns) integer array (`TableDomain.frame` names its columns for
libraries that take a data frame).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.neighbours import NeighbourCheck, by_relation, declare, local
from dpaudit.mechanisms.records import NumberRecords
from dpaudit.validation import check_int

__all__ = ["TableDomain", "selection_pair", "spread_pair", "worst_case_pair"]


@dataclasses.dataclass(frozen=True)
class TableDomain:
    """A declared table domain: column names and each column's number of categories (values 0 .. k − 1).

    Attributes:
        columns: the column names, in the order of a record's entries.
        categories: each column's number of categories (at least 2).
    """

    columns: tuple[str, ...]
    categories: tuple[int, ...]

    def __post_init__(self) -> None:
        columns, categories = tuple(self.columns), tuple(self.categories)
        if not columns or len(columns) != len(categories) or len(set(columns)) != len(columns):
            raise InvalidParameterError(
                "A TableDomain needs distinct column names and one number of categories per column; "
                f"got {len(columns)} names ({len(set(columns))} distinct) and {len(categories)} counts."
            )
        object.__setattr__(self, "columns", tuple(str(c) for c in columns))
        object.__setattr__(self, "categories", tuple(check_int(k, "categories", "TableDomain", low=2) for k in categories))

    @classmethod
    def uniform(cls, columns: int, categories: int) -> "TableDomain":
        """Return the domain of `columns` columns named c0, c1, ..., each of `categories` categories."""
        width = check_int(columns, "columns", "TableDomain.uniform")
        return cls(tuple(f"c{j}" for j in range(width)), (categories,) * width)

    @property
    def width(self) -> int:
        """Return the number of columns."""
        return len(self.columns)

    def target(self) -> np.ndarray:
        """Return the worst-case target: the last category of every column."""
        return np.array([k - 1 for k in self.categories], dtype=np.int64)

    def frame(self, data: Any) -> Any:
        """Return the records `data` as a pandas DataFrame with the domain's column names (pandas imported here)."""
        import pandas as pd

        return pd.DataFrame(np.asarray(data, dtype=np.int64).reshape(-1, self.width), columns=list(self.columns))

    def outside(self, d: np.ndarray, name: str) -> Optional[str]:
        """Return None when every record of `d` is a vector of codes inside the domain, else the sentence naming the first that is not."""
        rows = np.asarray(d)
        if rows.ndim != 2 or rows.shape[1] != self.width:
            return f"{name} must be rows of {self.width} category codes (columns {', '.join(self.columns)}); got shape {rows.shape}"
        if rows.dtype.kind not in "iu":
            return f"{name} must hold integer category codes; got {rows.dtype}"
        bad = (rows < 0) | (rows >= np.asarray(self.categories))
        if bad.any():
            i, j = np.argwhere(bad)[0]
            return f"record {i} of {name} has {rows[i, j]} in column '{self.columns[j]}', whose codes are 0 .. {self.categories[j] - 1}"
        return None

    def neighbours(self, relation: str = "add-remove") -> NeighbourCheck:
        """Return the check of `relation` on this domain: every record inside it; one record inserted (or replaced)."""
        relation = by_relation(relation, records=NumberRecords(0, max(self.categories) - 1, width=self.width, integer=True))

        def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
            return self.outside(d0, "d0") or self.outside(d1, "d1") or relation(d0, d1)

        return declare(local(check), NumberRecords(0, max(self.categories) - 1, width=self.width, integer=True))


def worst_case_pair(domain: TableDomain, rows: int = 10, relation: str = "add-remove") -> tuple[np.ndarray, np.ndarray]:
    """Return (base, base with the target added): `rows` records at category 0, the target at the last category of each column.

    The target shares no value with any other record, so each marginal
    cell it falls in holds it alone (Annamalai, Ganev, De Cristofaro 2024).
    The target is the last row of d1 (`domain.target()`). Under
    "replace-one" the target replaces the last of the `rows` records instead.
    """
    if not isinstance(domain, TableDomain):
        raise InvalidParameterError(f"worst_case_pair needs a TableDomain; got {type(domain).__name__} instead.")
    if relation not in ("add-remove", "replace-one"):
        raise InvalidParameterError(f"The 'relation' parameter of worst_case_pair must be 'add-remove' or 'replace-one'; got {relation!r}.")
    n = check_int(rows, "rows", "worst_case_pair", low=2 if relation == "replace-one" else 1)
    base = np.zeros((n, domain.width), dtype=np.int64)
    if relation == "replace-one":
        return base, np.vstack([base[:-1], domain.target()[None, :]])
    return base, np.vstack([base, domain.target()[None, :]])


def selection_pair(domain: TableDomain, rows: int = 10_000) -> tuple[np.ndarray, np.ndarray]:
    """Return (base, base with the target added) on which the target decides which two-way marginals MST selects.

    Each base record is one bit z (half the records 0, half 1) written in
    every column j as the last category when z XOR (j mod 2) is 1, else as
    category 0; the target is the last category in every column. Columns
    of the same parity are equal, of different parity complementary, so the
    target's cell of a same-parity pair holds half the base (above the
    rows/4 that one-way marginals predict) and of a mixed pair none (below
    it): the target raises the selection score (the L1 error of the
    independent estimate) of every same-parity pair by one and lowers every
    mixed pair's by one, the largest move one record makes in MST's
    exponential mechanism (Ganev, Annamalai, Kulynych 2026 audit MST's
    selection so). The measured cells move by one, as with `worst_case_pair`.
    """
    if not isinstance(domain, TableDomain):
        raise InvalidParameterError(f"selection_pair needs a TableDomain; got {type(domain).__name__} instead.")
    n = check_int(rows, "rows", "selection_pair", low=2)
    z = (np.arange(n) >= n // 2).astype(np.int64)
    bits = z[:, None] ^ (np.arange(domain.width) % 2)[None, :]
    base = bits * (np.asarray(domain.categories, dtype=np.int64) - 1)[None, :]
    return base, np.vstack([base, domain.target()[None, :]])


def spread_pair(domain: TableDomain, rows: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Return (base, base with the target added): `rows` records spread over the non-target categories, the target added.

    Record i holds category i mod (k_j − 1) in column j (k_j that column's
    categories), so each column of the base takes every category but the
    last, and the target (the last category of every column) still shares
    no value with any other record: each marginal cell it falls in holds it
    alone, as in `worst_case_pair`, while no column of the base is constant
    (for generators that cannot fit a column holding one value). Needs at
    least 3 categories in every column and 2 rows.
    """
    if not isinstance(domain, TableDomain):
        raise InvalidParameterError(f"spread_pair needs a TableDomain; got {type(domain).__name__} instead.")
    if min(domain.categories) < 3:
        raise InvalidParameterError(
            "spread_pair needs at least 3 categories in every column (two for the base, one for the target); "
            f"got {min(domain.categories)}.")
    n = check_int(rows, "rows", "spread_pair", low=2)
    base = np.arange(n, dtype=np.int64)[:, None] % (np.asarray(domain.categories, dtype=np.int64) - 1)[None, :]
    return base, np.vstack([base, domain.target()[None, :]])
