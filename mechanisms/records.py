"""What one record of a mechanism's dataset may be: the declaration canaries are made from.

A canary is a record the auditor inserts into a dataset, so it must be a
record the mechanism's claim is about; a record outside that set (a vector
of norm 2 where records lie in [0, 1]) can make a correct mechanism look
broken. A mechanism declares its records with one of these small frozen
specs (`Mechanism.records`); without one, dpaudit knows only the records of
its default pair and makes no canaries of its own.

- `VectorRecords`: every real vector is a record (the mechanism bounds a
  record's effect itself, e.g. by clipping to `norm`); canaries are vectors
  of that norm.
- `CategoryRecords`: integers in [0, count).
- `BoxRecords`: `width` numbers, each in [low, high] (width 1: a number).
"""

from __future__ import annotations

import dataclasses
from typing import Union

from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_int, check_real

__all__ = ["BoxRecords", "CategoryRecords", "RecordSpec", "VectorRecords"]


@dataclasses.dataclass(frozen=True)
class VectorRecords:
    """Any real vector is a record; the mechanism limits each record's effect at ℓ_order norm `norm`.

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


@dataclasses.dataclass(frozen=True)
class CategoryRecords:
    """A record is an integer category in [0, count)."""

    count: int

    def __post_init__(self) -> None:
        check_int(self.count, "count", "CategoryRecords", low=2)


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


RecordSpec = Union[VectorRecords, CategoryRecords, BoxRecords]
"""One of the three declarations."""
