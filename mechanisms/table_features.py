"""Tables as releases: each released table becomes a vector of features of one target record, fixed before the game.

A synthetic-data generator releases a whole table (a data frame, or a 2-D
array with the input's columns). `tabulate(generator, target)` is the
generator whose release is `TableFeatures(target)(table)`, a vector every
game of dpaudit already scores: the two-dataset audit's distinguishers
(`audit_mechanism`), and the canary game's black-box scores
(`audit_canaries(..., canary="pair", scorer="black-box-sum")`). The
features are the black-box features of the synthetic-data membership
attacks (Stadler, Oprisanu, Troncoso, USENIX Security 2022; Annamalai,
Ganev, De Cristofaro, USENIX Security 2024), for the target t of d
attributes:

- `rows`: the table's number of rows;
- `exact`: rows equal to t; `near`: rows equal to t in all but at most one attribute;
- the marginal counts: for every set of one, two (and three, `ways=3`)
  columns, the rows equal to t on those columns;
- `closeness`: −(the fewest attributes in which a row differs from t); −d
  for an empty table.

Each feature grows when t is present (a generator that learnt t makes rows
like it), so their sum is a fair black-box score. Values are compared for
equality only (categories; a number is a category of itself). A data
frame's columns are matched by name, an array's by position.

It is a mechanism transform (like `dpaudit.mechanisms.transforms`), so the
registered generators (`dpaudit.mechanisms.adapters.synth`) release their
features and every entry point audits them as they are.

Soundness: the features read the released table, the target and the
column names, all fixed before the game; the map is a fixed
post-processing of the release, so a lower bound certified on the features
is one on the generator (post-processing cannot raise ε).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms.base import Mechanism, fresh_copy
from dpaudit.mechanisms.outputs import check_tables
from dpaudit.validation import check_int

__all__ = ["TableFeatures", "feature_names", "table_features", "tabulate"]

MAX_WAYS = 3


def feature_names(columns: Sequence[str], ways: int = MAX_WAYS) -> list[str]:
    """Return the names of the features, in their order: rows, exact, near, the marginals ("a", "a&b", ...), closeness."""
    names = ["rows", "exact", "near"]
    for k in range(1, ways + 1):
        names += ["&".join(subset) for subset in itertools.combinations([str(c) for c in columns], k)]
    return names + ["closeness"]


@dataclasses.dataclass(frozen=True, eq=False)
class TableFeatures:
    """The feature map of one target record: `features(table)` returns one float vector (`feature_names` names it).

    Attributes:
        target: the target's values, one per column (a mapping column → value names the columns).
        columns: the column names (default: the mapping's keys, else c0, c1, ...).
        ways: the largest marginal counted (1, 2 or 3).
    """

    target: Any
    columns: tuple[str, ...] | None = None
    ways: int = MAX_WAYS

    def __post_init__(self) -> None:
        target = self.target
        columns = self.columns
        if isinstance(target, Mapping):
            columns = tuple(str(c) for c in target) if columns is None else columns
            target = [target[c] for c in target]
        values = np.asarray(target, dtype=object).ravel()
        if values.size == 0:
            raise InvalidParameterError("The target of a table audit must have at least one value.")
        columns = tuple(f"c{j}" for j in range(values.size)) if columns is None else tuple(str(c) for c in columns)
        if len(columns) != values.size:
            raise InvalidParameterError(f"The target has {values.size} values but {len(columns)} columns are named.")
        object.__setattr__(self, "target", values)
        object.__setattr__(self, "columns", columns)
        ways = check_int(self.ways, "ways", "TableFeatures")
        if ways > MAX_WAYS:
            raise InvalidParameterError(f"The 'ways' parameter of TableFeatures must be 1, 2 or 3; got {ways} instead.")
        object.__setattr__(self, "ways", ways)

    @property
    def names(self) -> list[str]:
        """Return the features' names (`feature_names`)."""
        return feature_names(self.columns, min(self.ways, len(self.columns)))

    def matches(self, table: Any, owner: str | None = None) -> np.ndarray:
        """Return the (rows, columns) booleans: entry (i, j) is whether row i of `table` equals the target in column j.

        Raises MechanismError (naming the mechanism `owner` when given) when the table lacks a column or has another width.
        """
        released = f"Mechanism '{owner}' released a table" if owner else "The table is a table"
        if hasattr(table, "columns") and hasattr(table, "to_numpy"):
            missing = [c for c in self.columns if c not in set(map(str, table.columns))]
            if missing:
                raise MechanismError(f"{released} without the column '{missing[0]}'.")
            by_name = {str(c): c for c in table.columns}
            cells = np.column_stack([table[by_name[c]].to_numpy(dtype=object) for c in self.columns]) if len(table) else \
                np.empty((0, len(self.columns)), dtype=object)
        else:
            cells = np.asarray(table, dtype=object)
            if cells.ndim != 2 or cells.shape[1] != len(self.columns):
                raise MechanismError(f"{released} of shape {cells.shape}; "
                                     f"the target has {len(self.columns)} columns.")
        return _equal(cells, self.target)

    def __call__(self, table: Any, owner: str | None = None) -> np.ndarray:
        """Return the feature vector of `table` (floats, in the order of `names`)."""
        match = self.matches(table, owner)
        d = match.shape[1]
        agree = match.sum(axis=1)
        out = [len(match), int(np.sum(agree == d)), int(np.sum(agree >= d - 1))]
        for k in range(1, min(self.ways, d) + 1):
            out += [int(np.sum(match[:, list(subset)].all(axis=1))) for subset in itertools.combinations(range(d), k)]
        out.append(-(d - int(agree.max())) if len(match) else -d)
        return np.asarray(out, dtype=np.float64)


def _equal(cells: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Return cells == target column by column, numbers compared as numbers (1 == 1.0), anything else by equality."""
    out = np.zeros(cells.shape, dtype=bool)
    for j, value in enumerate(target):
        column = cells[:, j]
        try:
            out[:, j] = np.asarray(column.astype(np.float64) == float(value))
        except (TypeError, ValueError):
            out[:, j] = np.array([x == value for x in column], dtype=bool)
    return out


def table_features(table: Any, target: Any, *, columns: Sequence[str] | None = None, ways: int = MAX_WAYS) -> np.ndarray:
    """Return the feature vector of one released `table` for `target` (see the module; `feature_names` names it)."""
    return TableFeatures(target, None if columns is None else tuple(columns), ways)(table)


class _Tabulated:
    """`sampler(data, size, rng)` of a tabulated generator: its tables, each made into features. Picklable."""

    def __init__(self, generator: Mechanism, features: TableFeatures) -> None:
        self.generator, self.features = generator, features

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Return the (size, features) matrix of `size` tables the generator releases on `data`."""
        name = self.generator.name
        tables = check_tables(name, self.generator.sampler(fresh_copy(data), size, rng), size)
        return np.stack([self.features(t, name) for t in tables]) if tables else np.empty((0, len(self.features.names)))

    @property
    def not_replayable(self) -> str | None:
        """Return why the generator's draws cannot be replayed (its sampler's `not_replayable`), or None."""
        return getattr(self.generator.sampler, "not_replayable", None)

    @property
    def replay(self) -> Callable[..., dict[str, Any]] | None:
        """Return the generator's replay in its own environment, each table made into features, or None when it has none."""
        inner = getattr(self.generator.sampler, "replay", None)
        return functools.partial(_featured_replay, inner, self.features, self.generator.name) if callable(inner) else None


def _featured_replay(replay: Callable[..., dict[str, Any]], features: TableFeatures, name: str, d0: Any, d1: Any,
                     rng: np.random.Generator) -> dict[str, Any]:
    """Return the record of `replay(d0, d1, rng)` with its two tables (release0, release1; None stays None) as features."""
    record = replay(d0, d1, rng)
    return {**record, **{k: None if record[k] is None else features(np.asarray(record[k]), name)
                         for k in ("release0", "release1")}}


def tabulate(generator: Mechanism, target: Any, *, columns: Sequence[str] | None = None, ways: int = MAX_WAYS) -> Mechanism:
    """Return `generator` (whose outputs are tables) releasing the features of each table for `target` instead.

    The claim, relation, neighbour check, default pair and event stay the
    generator's: the features are a fixed post-processing of its release
    (inputs: the table, `target` and `columns`, fixed before the game), so
    a bound on the tabulated mechanism holds for the generator.
    """
    if not isinstance(generator, Mechanism):
        raise InvalidParameterError(
            f"tabulate needs a Mechanism; got {type(generator).__name__} (wrap a function with dpaudit.mechanisms.blackbox)."
        )
    features = TableFeatures(target, None if columns is None else tuple(columns), ways)
    shown = ", ".join(f"{c}={v}" for c, v in zip(features.columns, features.target))
    return dataclasses.replace(
        generator, sampler=_Tabulated(generator, features),
        params={**generator.params, "release": f"table features of the target ({shown})"},
        description=(generator.description + "; " if generator.description else "")
        + f"each released table made into {len(features.names)} features of the target ({shown})",
    )
