"""Wrap a user's plain function `fn(data, rng)` as a `Mechanism`."""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Claim, Mechanism, Relation, fresh_copy
from dpaudit.mechanisms.deferred_event import UNSUPPORTED
from dpaudit.mechanisms.neighbours import NeighbourCheck
from dpaudit.mechanisms.records import BoxRecords, CategoryRecords, RecordSpec, VectorRecords

__all__ = ["blackbox"]

FAILED = object()


def _accepts_size(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "size" in params


def _looped(fn: Callable[..., Any]) -> Callable[[Any, int, np.random.Generator], Any]:
    def sample(data: Any, size: int, rng: np.random.Generator) -> Any:
        outputs, failures = [], []
        for _ in range(size):
            try:
                outputs.append(fn(fresh_copy(data), rng))
            except Exception as exc:  # an adversary sees the failure: it is one more output
                outputs.append(FAILED)
                failures.append(exc)
        if len(failures) == size > 1:  # a function that always raises is broken; one call may fail by chance
            raise failures[0]
        return _with_failures(outputs) if failures else outputs

    return sample


def _with_failures(outputs: list[Any]) -> list[Any]:
    """Return the outputs with each failed call as NaN (NaNs of the outputs' shape for vectors)."""
    blank = np.full(np.shape(next((o for o in outputs if o is not FAILED), np.nan)), np.nan)
    return [blank if o is FAILED else o for o in outputs]


def _batched(fn: Callable[..., Any]) -> Callable[[Any, int, np.random.Generator], Any]:
    def sample(data: Any, size: int, rng: np.random.Generator) -> Any:
        return fn(data, rng, size=size)

    return sample


def blackbox(
    fn: Callable[..., Any],
    *,
    epsilon: float,
    delta: float = 0.0,
    name: str | None = None,
    relation: Relation | str = Relation.ADD_REMOVE,
    default_pair: tuple[Any, Any] | None = None,
    neighbours: NeighbourCheck | None = None,
    null_record: Any = None,
    records: RecordSpec | None = None,
) -> Mechanism:
    """Return `fn` as a `Mechanism` claiming (epsilon, delta)-DP for `relation`.

    `fn(data, rng)` returns one output (scalar, vector, integer or string). If
    it has a parameter named `size` it must return `size` outputs at once,
    and is called that way (fast); otherwise it is called once per output (a
    loop). In the loop a call that raises is an output of its own (NaN, which
    `dpaudit.mechanisms.outputs` maps to a fixed number), since an adversary would
    see the failure; only a batch in which every call raises stops the audit.
    Each call gets a fresh copy of the data, so a function that writes to
    its input is audited as written and the caller's data never change.
    Nothing is assumed about its privacy: its upper bound is its claim.

    Before any trial, an audit refuses a pair that is not neighbouring under
    `relation` (`dpaudit.mechanisms.neighbours.by_relation`: replace-one,
    one record differs; add-remove, one dataset holds one record more), since
    a bound on such a pair says nothing about the claim. Nothing is assumed
    of a record: equal-length datasets are add-remove neighbours only when
    `null_record` declares the record that adds nothing to `fn` (such as 0
    for a sum) and the differing record is null in one of them.
    `neighbours(d0, d1)`, if given, replaces the relation's check: it answers
    True or None for neighbours, False or a sentence saying why not, and sees
    two arrays of records of one length (the pair itself, or, when one holds
    one record more, each dataset against itself after dpaudit has checked
    the insertion: `dpaudit.mechanisms.base.not_neighbours`);
    `neighbours.unchecked` accepts any pair. Data frames, dicts of columns
    and structured arrays reach `fn` as given; their columns are matched by
    name. Canary audits make canaries only from declared `records`
    (`VectorRecords`, `CategoryRecords`, `BoxRecords`); without them they
    play the default pair.

    Args:
        fn: `fn(data, rng)` (or `fn(data, rng, size)`) returning one output (or `size`).
        epsilon, delta, relation: the claim to audit.
        name: the label in reports (default: the function's name).
        default_pair: the neighbouring pair audited when none is given.
        neighbours: a check of (d0, d1) replacing the relation's, or `neighbours.unchecked`.
        null_record: the record that stands for "no record" under add-remove (none by default).
        records: what a record may be, for canaries (none by default).

    Returns:
        A `Mechanism` whose upper bound is its claim (nothing else is known about `fn`).

    Raises:
        InvalidParameterError: on a bad claim or argument (one sentence).
    """
    if records is not None and not isinstance(records, (VectorRecords, CategoryRecords, BoxRecords)):
        raise InvalidParameterError(
            "The 'records' parameter of blackbox must be a VectorRecords, CategoryRecords or BoxRecords; "
            f"got {type(records).__name__} instead."
        )
    sampler = _batched(fn) if _accepts_size(fn) else _looped(fn)
    return Mechanism(
        name=name or getattr(fn, "__name__", "blackbox"),
        sampler=sampler,
        claim=Claim(epsilon, delta, relation),
        event=UNSUPPORTED,
        default_pair=default_pair,
        neighbours=neighbours,
        null_record=null_record,
        records=records,
    )
