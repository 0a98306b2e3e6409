"""What one record of a mechanism's dataset may be: its domain, the one home of "a domain and its check".

A canary is a record the auditor inserts into a dataset, so it must be a
record the mechanism's claim is about; a record outside that set (a vector
of norm 2 where records lie in [0, 1]) can make a correct mechanism look
broken, and so can a pair the user gives. Each domain below is a small
frozen spec that says what a record is (`describe`) and finds the first
record of a dataset outside it (`check_records`); every check dpaudit
builds from a declared domain calls it (the built-ins' neighbour checks in
`dpaudit.mechanisms.neighbours`, `by_relation(..., records=)`, and a
mechanism's declared `records`). NaN and ±inf are outside every domain;
only the declared null record (NaN for an absent record, say) is let
through as itself. A record must also have the declared shape: a pair of
numbers is not a number.

- `VectorRecords`: every real vector is a record (the mechanism bounds a
  record's effect itself, e.g. by clipping to `norm`); canaries are vectors
  of that norm.
- `CategoryRecords`: integers in [0, count).
- `BoxRecords`: `width` numbers, each in [low, high] (width 1: a number);
  canaries are corners of the box.
- `NumberRecords`: like a box, but its bounds may be infinite (any finite
  number, for a mechanism that clips its records or takes query answers);
  a domain only, never a source of canaries.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, Optional, Union

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_int, check_real

__all__ = ["BoxRecords", "CategoryRecords", "Domain", "NumberRecords", "RecordSpec", "VectorRecords"]

SHOWN = 4  # entries of a vector record shown in a message


@dataclasses.dataclass(frozen=True)
class NumberRecords:
    """A record is a number (width 1) or `width` numbers, each finite and in [low, high]; the bounds may be infinite.

    Attributes:
        low, high: the bounds (−inf and inf by default: any finite number).
        width: the numbers in a record; 1: a number (shape () or (1,)); None: a vector of any length.
        integer: True when each number must be an integer, of an integer type (1.0 is a float, refused).
    """

    low: float = -math.inf
    high: float = math.inf
    width: int | None = 1
    integer: bool = False

    def __post_init__(self) -> None:
        for name in ("low", "high"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
                raise InvalidParameterError(f"The '{name}' parameter of NumberRecords must be a number; got {value!r} instead.")
        if not self.low <= self.high:
            raise InvalidParameterError(f"NumberRecords needs low ≤ high; got [{self.low:g}, {self.high:g}].")
        if self.width is not None:
            check_int(self.width, "width", "NumberRecords")

    def describe(self) -> str:
        """Return what a record is, as a message ends: "numbers in [0, 1]", "vectors of 3 integers in [-1, 1]"."""
        kind = "integers" if self.integer else "numbers"
        bounds = "" if math.isinf(self.low) and math.isinf(self.high) else f" in [{self.low:g}, {self.high:g}]"
        if not bounds:
            kind = f"finite {kind}"
        if self.width == 1:
            return f"{kind}{bounds}"
        if self.width is None:
            return f"vectors of {kind}{bounds}"
        return f"vectors of {self.width} {kind}{bounds}"

    def check_records(self, d: Any, name: str, *, null_record: Any = None) -> Optional[str]:
        """Return None when every record of dataset `name` (records on the first axis) lies in the domain, else why not.

        The sentence names the first record outside it ("record 1 of d1 is
        NaN; records are numbers in [0, 1]"). An entry equal to
        `null_record` (NaN equal to NaN) is let through.
        """
        d = np.asarray(d)
        if d.ndim == 0:
            d = d.reshape(1)
        reason = self._shape_reason(d) or _type_reason(d)
        if reason:
            index, what = reason
            return f"record {index} of {name} is {what}; records are {self.describe()}"
        if len(d) == 0:
            return None
        rows = d.reshape(len(d), -1)
        if rows.dtype == object:  # real numbers held as objects: numpy's own type for them (ints stay ints)
            rows = np.array(rows.tolist()).reshape(rows.shape)
        exact = rows.dtype.kind in "iu" and rows.size and np.abs(rows).max() >= 2**53  # whole numbers beyond a double's
        values = rows if exact else rows.astype(float)
        bad = ~self._inside(values)
        if null_record is not None and rows.size:
            bad &= ~_is_null_entry(values, null_record)
        if bad.any():
            index = int(np.flatnonzero(bad.any(axis=1))[0])
            return f"record {index} of {name} is {_show(d[index])}; records are {self.describe()}"
        if self.integer and rows.dtype.kind not in "iu" and rows.size and not np.all(np.isnan(values)):
            index = int(np.flatnonzero(~np.all(np.isnan(values), axis=1))[0])
            return f"record {index} of {name} is {_show(d[index])}, a float; records are {self.describe()}"
        return None

    def _shape_reason(self, d: np.ndarray) -> tuple[int, str] | None:
        """Return (0, what record 0 is) when the records have a shape other than the declared one, else None."""
        shape = d.shape[1:]
        if self.width is None:
            fits = len(shape) == 1 and shape[0] >= 1
        else:
            fits = shape in ((), (self.width,)) if self.width == 1 else shape == (self.width,)
        if fits or len(d) == 0:
            return None
        return 0, f"{_show(d[0])} (of shape {shape})"

    def _inside(self, values: np.ndarray) -> np.ndarray:
        """Return, per entry, whether it is a finite number in [low, high] (and whole when `integer`); NaN is not."""
        with np.errstate(invalid="ignore"):
            inside = np.isfinite(values) & (values >= self.low) & (values <= self.high)
            if self.integer and values.dtype.kind == "f":
                inside &= np.floor(values) == values
        return inside


def _type_reason(d: np.ndarray) -> tuple[int, str] | None:
    """Return (index, what it is) of the first record that is not made of real numbers (text, bools, objects), else None."""
    if d.dtype.kind in "iuf" or len(d) == 0:
        return None
    for index, record in enumerate(d):
        entries = np.asarray(record, dtype=object).ravel().tolist()
        odd = next((x for x in entries if isinstance(x, bool) or not isinstance(x, numbers.Real)), None)
        if odd is not None:
            return index, f"{odd!r:.40}, not a real number"
    return None if d.dtype == object else (0, f"of type {d.dtype}, not numbers")


def _is_null_entry(values: np.ndarray, null_record: Any) -> np.ndarray:
    """Return, per entry, whether it equals the null record (a single value, or a record of the same width); NaN equals NaN."""
    null = np.asarray(null_record, dtype=float).ravel()
    if null.size not in (1, values.shape[1]):
        return np.zeros(values.shape, dtype=bool)
    values = values.astype(float)
    return (values == null) | (np.isnan(values) & np.isnan(null))


def _show(record: Any) -> str:
    """Return a record as a message shows it: NaN, inf, 0.5, 'a', or [0, 0] (its first SHOWN entries)."""
    arr = np.asarray(record)
    if arr.ndim == 0:
        return _show_value(arr.item())
    flat = arr.ravel().tolist()
    more = ", …" if len(flat) > SHOWN else ""
    return "[" + ", ".join(_show_value(x) for x in flat[:SHOWN]) + more + "]"


def _show_value(x: Any) -> str:
    if isinstance(x, float):
        return "NaN" if math.isnan(x) else repr(x)
    if isinstance(x, str):
        return repr(str(x))
    return repr(bytes(x)) if isinstance(x, bytes) else f"{x}"


@dataclasses.dataclass(frozen=True)
class VectorRecords:
    """Any finite real vector is a record; the mechanism limits each record's effect at ℓ_order norm `norm`.

    Attributes:
        norm: the norm at which a record's effect saturates (the clip norm); canaries have it.
        order: 2 (dense canaries ±norm/√d) or 1 (sparse canaries ±norm·e_i, for ℓ1 clipping).
        width: the number of entries of a record; None: any width.
    """

    norm: float = 1.0
    order: int = 2
    width: int | None = None

    def __post_init__(self) -> None:
        check_real(self.norm, "norm", "VectorRecords", low=0.0, low_open=True)
        if self.order not in (1, 2):
            raise InvalidParameterError(f"The 'order' parameter of VectorRecords must be 1 or 2; got {self.order!r} instead.")
        if self.width is not None:
            check_int(self.width, "width", "VectorRecords")

    def describe(self) -> str:
        """Return what a record is ("vectors of finite numbers")."""
        return NumberRecords(width=self.width).describe()

    def check_records(self, d: Any, name: str, *, null_record: Any = None) -> Optional[str]:
        """Return None when every record of `name` is a finite vector of the declared width, else why not (naming the record)."""
        return NumberRecords(width=self.width).check_records(d, name, null_record=null_record)


@dataclasses.dataclass(frozen=True)
class CategoryRecords:
    """A record is an integer category in [0, count)."""

    count: int

    def __post_init__(self) -> None:
        check_int(self.count, "count", "CategoryRecords", low=2)

    def describe(self) -> str:
        """Return what a record is ("integers in [0, 4)")."""
        return f"integers in [0, {self.count})"

    def check_records(self, d: Any, name: str, *, null_record: Any = None) -> Optional[str]:
        """Return None when every record of `name` is a category in [0, count) (or the null record), else why not (naming it)."""
        said = NumberRecords(0, self.count - 1, integer=True).check_records(d, name, null_record=null_record)
        return None if said is None else said.rsplit("; ", 1)[0] + f"; records are {self.describe()}"


@dataclasses.dataclass(frozen=True)
class BoxRecords:
    """A record is `width` numbers, each in [low, high] (a number when width is 1)."""

    low: float
    high: float
    width: int = 1

    def __post_init__(self) -> None:
        low = check_real(self.low, "low", "BoxRecords")
        check_real(self.high, "high", "BoxRecords", low=low, low_open=True)
        check_int(self.width, "width", "BoxRecords")

    def describe(self) -> str:
        """Return what a record is ("numbers in [0, 1]")."""
        return self._numbers().describe()

    def check_records(self, d: Any, name: str, *, null_record: Any = None) -> Optional[str]:
        """Return None when every record of `name` lies in the box (or is the null record), else why not (naming the record)."""
        return self._numbers().check_records(d, name, null_record=null_record)

    def _numbers(self) -> NumberRecords:
        return NumberRecords(self.low, self.high, self.width)


RecordSpec = Union[VectorRecords, CategoryRecords, BoxRecords]
"""One of the three declarations canaries are made from."""

Domain = Union[VectorRecords, CategoryRecords, BoxRecords, NumberRecords]
"""What a record may be: a `RecordSpec`, or `NumberRecords` (a domain only)."""
