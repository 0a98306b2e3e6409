"""Declarative parameter validation, in the manner of scikit-learn.

Each check takes (value, name, owner), then keyword-only options, and returns
the validated value or raises `InvalidParameterError` with one sentence of the
form "The 'name' parameter of owner must be ...; got ... instead."
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from dpaudit.errors import InvalidParameterError

__all__ = ["check_delta", "check_epsilon", "check_int", "check_probability_open", "check_real"]


def _fail(name: str, owner: str, must: str, value: object) -> InvalidParameterError:
    return InvalidParameterError(
        f"The '{name}' parameter of {owner} must be {must}; got {value!r} instead."
    )


def check_real(
    value: object,
    name: str,
    owner: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return `value` as a float after checking it is finite and within the interval."""
    lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
    must = f"a finite number in {lo}{low:g}, {high:g}{hi}"
    if isinstance(value, bool) or not isinstance(value, Real):
        raise _fail(name, owner, must, value)
    x = float(value)
    if not math.isfinite(x):
        raise _fail(name, owner, must, value)
    if x < low or (low_open and x == low) or x > high or (high_open and x == high):
        raise _fail(name, owner, must, value)
    return x


def check_epsilon(value: object, name: str, owner: str) -> float:
    """Return a validated ε: finite and ≥ 0."""
    return check_real(value, name, owner, low=0.0)


def check_delta(value: object, name: str, owner: str) -> float:
    """Return a validated δ in [0, 1)."""
    return check_real(value, name, owner, low=0.0, high=1.0, high_open=True)


def check_probability_open(value: object, name: str, owner: str) -> float:
    """Return a validated number strictly between 0 and 1 (e.g. a confidence level)."""
    return check_real(value, name, owner, low=0.0, high=1.0, low_open=True, high_open=True)


def check_int(value: object, name: str, owner: str, *, low: int = 1) -> int:
    """Return `value` as an int after checking it is an integer ≥ `low`."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise _fail(name, owner, f"an integer ≥ {low}", value)
    return int(value)
