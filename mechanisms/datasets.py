"""A dataset as the array of its records, with named columns matched by name, never by position.

A dataset is an array-like with one record per entry of its first axis, or
a table of named columns: a pandas data frame, a dict of equal-length
columns, or a numpy structured array. Two tables are comparable only when
they have the same set of column names; their records are then read in one
column order (the first dataset's), so that `{"a": .., "b": ..}` and
`{"b": .., "a": ..}` hold the same records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["column_names", "record_count", "records", "records_of_pair", "select_records"]


def column_names(data: Any) -> tuple[str, ...] | None:
    """Return the column names of a data frame, a dict of columns or a structured array; None for other data."""
    if hasattr(data, "to_numpy") and hasattr(data, "columns"):
        return tuple(data.columns)
    if isinstance(data, Mapping):
        return tuple(data)
    names = getattr(getattr(data, "dtype", None), "names", None)
    return tuple(names) if names else None


def _column(data: Any, name: str) -> np.ndarray:
    if hasattr(data, "to_numpy") and hasattr(data, "columns"):
        return np.asarray(data[name].to_numpy())
    return np.asarray(data[name])


def _stack(columns: list[np.ndarray]) -> np.ndarray:
    """Return the columns side by side, one record per row: numbers stay numbers, anything else becomes objects."""
    if not columns or len({len(c) for c in columns}) != 1:
        raise ValueError("a table needs at least one column, all of one length")
    flat = [c.reshape(len(c), int(np.prod(c.shape[1:], dtype=int))) for c in columns]
    if all(c.dtype.kind in "biuf" for c in flat):
        return np.concatenate(flat, axis=1)
    return np.concatenate([c.astype(object) for c in flat], axis=1)


def records(data: Any, columns: tuple[str, ...] | None = None) -> np.ndarray:
    """Return `data` as an array of records (first axis): a table's rows with its columns in `columns` order.

    `columns` defaults to the table's own order. Raises ValueError when
    `data` is not array-like, a table's columns differ in length, or
    `columns` names a column the table lacks.
    """
    names = column_names(data)
    if names is not None:
        order = names if columns is None else columns
        missing = [c for c in order if c not in names]
        if missing:
            raise ValueError(f"it has no column {missing[0]!r}")
        return _stack([_column(data, name) for name in order])
    arr = np.asarray(data)
    return arr.reshape(1) if arr.ndim == 0 else arr


def records_of_pair(d0: Any, d1: Any) -> tuple[np.ndarray, np.ndarray]:
    """Return the records of two datasets with their columns matched by name.

    Raises ValueError, one sentence, when one is a table and the other is
    not, when their column sets differ, or when a table repeats a column name.
    """
    n0, n1 = column_names(d0), column_names(d1)
    if (n0 is None) != (n1 is None):
        named = "d0" if n0 is not None else "d1"
        raise ValueError(f"{named} has named columns and the other has none; give both as tables of the same columns")
    if n0 is not None:
        for label, names in (("d0", n0), ("d1", n1)):
            if len(set(names)) != len(names):
                raise ValueError(f"{label} repeats a column name; columns are matched by name")
        if set(n0) != set(n1):
            only0, only1 = sorted(map(str, set(n0) - set(n1))), sorted(map(str, set(n1) - set(n0)))
            raise ValueError(
                f"their columns differ (only in d0: {', '.join(only0) or 'none'}; only in d1: {', '.join(only1) or 'none'})"
            )
    return records(d0, n0), records(d1, n0)


def record_count(data: Any) -> int:
    """Return the number of records of a dataset: a table's rows, an array's first axis (a scalar is one record)."""
    names = column_names(data)
    if names is not None and not hasattr(data, "dtype"):
        return len(data) if hasattr(data, "to_numpy") else (len(np.asarray(data[names[0]])) if names else 0)
    return len(records(data))


def select_records(data: Any, rows: np.ndarray) -> Any:
    """Return the dataset of the records of `data` at the indices `rows`, in order, of the same kind as `data`.

    A data frame stays a data frame (renumbered from 0), a dict of columns a
    dict of columns, an array an array.
    """
    if hasattr(data, "to_numpy") and hasattr(data, "columns"):
        return data.iloc[rows].reset_index(drop=True)
    if isinstance(data, Mapping):
        return {name: np.asarray(column)[rows] for name, column in data.items()}
    return records(data)[rows]
