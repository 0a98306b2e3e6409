"""Quantiles of an array that is already sorted, equal to `numpy.quantile`'s default ("linear") to the last bit.

`numpy.quantile` partitions its input around every quantile's neighbours,
which costs as much as sorting it again; a caller holding the sorted values
only needs the two neighbours of each quantile and numpy's interpolation
(`numpy.lib._function_base_impl._lerp`, Hyndman and Fan's method 7), done
here on the same float64 operations in the same order. Two sorted arrays
are pooled by merging them (`merge_sorted`), not by sorting their
concatenation again.
"""

from __future__ import annotations

import numpy as np

__all__ = ["merge_sorted", "sorted_quantile"]


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


def merge_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return `numpy.sort(numpy.concatenate([a, b]))` for sorted 1-d arrays `a` and `b`, element for element.

    numpy's default sort gains nothing from the two sorted runs (it takes
    longer on them than on shuffled values); its stable sort finds them and
    merges them in one pass. Both give the same values in the same order,
    except that the order among equal values may differ, which shows only
    between −0.0 and 0.0 (or NaNs of different bits): arrays holding a zero
    or a NaN are sorted as before.
    """
    both = np.concatenate([a, b])
    kind = None if _zero_or_nan(a) or _zero_or_nan(b) else "stable"
    return np.sort(both, kind=kind)


def _zero_or_nan(values: np.ndarray) -> bool:
    """Return True when the sorted float array `values` holds a zero or a NaN (integers: never; their equal values are alike)."""
    if values.dtype.kind != "f" or not len(values):
        return False
    return bool(np.isnan(values[-1]) or np.searchsorted(values, 0.0, "left") < np.searchsorted(values, 0.0, "right"))
