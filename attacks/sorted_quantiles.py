"""Quantiles of an array that is already sorted, equal to `numpy.quantile`'s default ("linear") to the last bit.

`numpy.quantile` partitions its input around every quantile's neighbours,
which costs as much as sorting it again; a caller holding the sorted values
only needs the two neighbours of each quantile and numpy's interpolation
(`numpy.lib._function_base_impl._lerp`, Hyndman and Fan's method 7), done
here on the same float64 operations in the same order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sorted_quantile"]


def sorted_quantile(values: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Return `numpy.quantile(values, q)` for a sorted 1-d array `values`, bit for bit, without sorting it again.

    Assumes `values` is sorted ascending (NaNs last, as `numpy.sort` puts
    them); with a NaN among them numpy's answer is NaN everywhere, and so is
    this one.
    """
    q = np.asarray(q, dtype=np.float64)
    n = len(values)
    if n == 0 or np.isnan(values[-1]):
        return np.quantile(values, q)
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    after = previous + 1
    previous[virtual >= n - 1], after[virtual >= n - 1] = -1, -1
    previous[virtual < 0], after[virtual < 0] = 0, 0
    previous, after = previous.astype(np.intp), after.astype(np.intp)
    gamma = virtual - previous
    a, b = values[previous], values[after]
    diff = b - a
    result = np.add(a, diff * gamma)
    np.subtract(b, diff * (1 - gamma), out=result, where=gamma >= 0.5)
    return result
