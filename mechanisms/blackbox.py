"""Wrap a user's plain function `fn(data, rng)` as a `Mechanism`."""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism, Relation, fresh_copy
from dpaudit.mechanisms.neighbours import NeighbourCheck

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
    one record differs; add-remove, one record more, or one record null in
    one of them), since a bound on such a pair says nothing about the claim.
    `neighbours(d0, d1)`, if given, replaces that check: it receives two
    equal-length arrays of records and returns None for neighbours, else a
    sentence saying why not; `neighbours.unchecked` accepts any pair.
    Data frames and dicts of columns reach `fn` as given.

    Args:
        fn: `fn(data, rng)` (or `fn(data, rng, size)`) returning one output (or `size`).
        epsilon, delta, relation: the claim to audit.
        name: the label in reports (default: the function's name).
        default_pair: the neighbouring pair audited when none is given.
        neighbours: a check of (d0, d1) replacing the relation's, or `neighbours.unchecked`.

    Returns:
        A `Mechanism` whose upper bound is its claim (nothing else is known about `fn`).

    Raises:
        InvalidParameterError: on a bad claim or argument (one sentence).
    """
    from dp_accounting import dp_event

    sampler = _batched(fn) if _accepts_size(fn) else _looped(fn)
    return Mechanism(
        name=name or getattr(fn, "__name__", "blackbox"),
        sampler=sampler,
        claim=Claim(epsilon, delta, relation),
        event=dp_event.UnsupportedDpEvent(),
        default_pair=default_pair,
        neighbours=neighbours,
    )
