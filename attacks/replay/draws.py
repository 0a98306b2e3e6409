"""What one draw from a `numpy.random.Generator` is: its method, its arguments by name, its output; and what each
argument means to a replay.

Every public sampling method of `numpy.random.Generator` (`SAMPLING_METHODS`)
is described by the roles of its arguments:

- the *location* (`LOCATION`: `loc` of laplace, normal, gumbel and logistic,
  `mean` of multivariate_normal): the value the noise is added to; on a
  neighbour it may move, and how far it moves is the sensitivity a replay
  measures (the noise is the output minus the location);
- the *data* (`DATA`: `x` of permutation, shuffle and permuted, `a` of
  choice when it is an array): the items reordered or chosen; on a
  neighbour their content may change, and only their count along the axis
  is part of the law (the draw itself is the indices);
- everything else (scales, probabilities, sizes, dtypes, flags): the law of
  the noise; a neighbour that asks for another one diverges.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Mapping

import numpy as np

__all__ = ["DATA", "LOCATION", "SAMPLING_METHODS", "SCALE", "Draw", "bind", "describe_law", "same_value"]

SAMPLING_METHODS = (
    "beta", "binomial", "bytes", "chisquare", "choice", "dirichlet", "exponential", "f", "gamma", "geometric",
    "gumbel", "hypergeometric", "integers", "laplace", "logistic", "lognormal", "logseries", "multinomial",
    "multivariate_hypergeometric", "multivariate_normal", "negative_binomial", "noncentral_chisquare",
    "noncentral_f", "normal", "pareto", "permutation", "permuted", "poisson", "power", "random", "rayleigh",
    "shuffle", "standard_cauchy", "standard_exponential", "standard_gamma", "standard_normal", "standard_t",
    "triangular", "uniform", "vonmises", "wald", "weibull", "zipf",
)
"""Every public method of `numpy.random.Generator` that draws (numpy 2): recorded and replayed one by one."""

LOCATION = {"laplace": "loc", "normal": "loc", "gumbel": "loc", "logistic": "loc", "multivariate_normal": "mean"}
"""The argument that is the value the noise is added to, per method (the output minus it is the noise)."""

SCALE = {"laplace": "scale", "normal": "scale", "gumbel": "scale", "logistic": "scale", "exponential": "scale"}
"""The scale argument of the location-scale laws (a replay with another scale rescales the frozen noise)."""

DATA = {"permutation": "x", "shuffle": "x", "permuted": "x", "choice": "a"}
"""The argument holding the items a draw reorders or chooses from (only their count is part of the law)."""

_SIGNATURES = {name: inspect.signature(getattr(np.random.Generator, name)) for name in SAMPLING_METHODS}


def bind(method: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Return the arguments of a call to `Generator.method` by name, defaults filled in (raises TypeError as numpy would)."""
    bound = _SIGNATURES[method].bind(None, *args, **kwargs)
    bound.apply_defaults()
    return {k: v for k, v in bound.arguments.items() if k != "self"}


@dataclasses.dataclass(frozen=True)
class Draw:
    """One recorded call: the method, its arguments by name, the noise it drew and the output it returned.

    `noise` is what a replay hands back: the output minus the location for
    the laws of `LOCATION`, the indices for the draws of `DATA`, else the
    output itself.
    """

    method: str
    arguments: Mapping[str, Any]
    noise: Any
    output: Any

    @property
    def shape(self) -> tuple[int, ...]:
        """Return the shape of the output."""
        return np.shape(self.output)

    def law(self) -> dict[str, Any]:
        """Return the arguments that make the law of the draw (the location and the data's content left out)."""
        law = {k: v for k, v in self.arguments.items() if k != LOCATION.get(self.method) and k != "out"}
        data = DATA.get(self.method)
        if data is not None and data in law:
            law[data] = _items(self.method, law[data], law.get("axis"))
        return law

    def describe(self) -> str:
        """Return the call in words, e.g. "laplace(scale=2.0, size=None)"."""
        return describe_law(self.method, self.law())


def _items(method: str, value: Any, axis: Any) -> Any:
    """Return what counts of a data argument: an integer as given, else the number of items along the axis."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    arr = np.asarray(value)
    if method == "permuted" and axis is None:
        return ("items", arr.size)
    return ("items", arr.shape[axis or 0] if arr.ndim else 0)


def describe_law(method: str, law: Mapping[str, Any]) -> str:
    """Return a call's method and law arguments in words (arrays of more than 4 entries by their shape)."""
    def shown(v: Any) -> str:
        arr = np.asarray(v) if not isinstance(v, (str, type)) else None
        if arr is not None and arr.size > 4:
            return f"array of shape {arr.shape}"
        return repr(v) if arr is None or arr.ndim == 0 else repr(arr.tolist())

    return f"{method}({', '.join(f'{k}={shown(v)}' for k, v in law.items() if v is not None)})"


def same_value(a: Any, b: Any) -> bool:
    """Return True when two arguments are the same: equal types of value and equal entries (NaN equal to NaN)."""
    if a is None or b is None or isinstance(a, (str, type, tuple)) or isinstance(b, (str, type, tuple)):
        return a is b or (type(a) is type(b) and a == b)
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))
    except (TypeError, ValueError):
        return bool(np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object)))
