"""The population of a tracing attack: column biases and ±1 rows drawn from them.

Rows live in {±1}^d; column j has bias p_j = E[y_j] ∈ [−1, 1]. Biases are
drawn uniformly on [−1, 1] (Dwork, Smith, Steinke, Ullman, Vadhan, "Robust
Traceability from Trace Amounts", FOCS 2015, §2) or from Tardos' arcsine-shaped
density (Tardos, "Optimal probabilistic fingerprint codes", STOC 2003, §2):
the probability of a +1 is sin²(r) with r uniform on [t', π/2 − t'],
t' = arcsin(√t), so no column is almost constant. Rows are stored as int8
(one byte per entry: 10⁴ × 10⁴ rows take 100 MB) and drawn in row blocks of
bounded memory.
"""

from __future__ import annotations

import math

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_int, check_real

__all__ = ["BIAS_KINDS", "BLOCK_ENTRIES", "column_biases", "sample_rows"]

UNIFORM, TARDOS = "uniform", "tardos"
BIAS_KINDS = (UNIFORM, TARDOS)
TARDOS_CUTOFF = 1 / 300
BLOCK_ENTRIES = 4_000_000


def column_biases(dim: int, *, kind: str = UNIFORM, rng: np.random.Generator,
                  cutoff: float = TARDOS_CUTOFF) -> np.ndarray:
    """Return d column biases p_j ∈ [−1, 1] (float64).

    Args:
        dim: the number of columns d.
        kind: "uniform" (p_j ~ U[−1, 1]) or "tardos" (P(y_j = +1) = sin²(r_j),
            r_j ~ U[t', π/2 − t'], t' = arcsin(√cutoff); Tardos 2003, §2).
        rng: the random stream.
        cutoff: Tardos' t; no column has P(+1) below t or above 1 − t.

    Raises:
        InvalidParameterError: on a bad dimension, kind or cutoff.
    """
    dim = check_int(dim, "dim", "column_biases")
    if kind == UNIFORM:
        return rng.uniform(-1.0, 1.0, dim)
    if kind != TARDOS:
        raise InvalidParameterError(
            f"The 'kind' parameter of column_biases must be one of {', '.join(BIAS_KINDS)}; got {kind!r} instead."
        )
    cutoff = check_real(cutoff, "cutoff", "column_biases", low=0.0, high=0.5, low_open=True, high_open=True)
    low = math.asin(math.sqrt(cutoff))
    return 2.0 * np.sin(rng.uniform(low, math.pi / 2 - low, dim)) ** 2 - 1.0


def sample_rows(biases: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """Return `count` independent rows of ±1 (int8, shape count × d) with E[y_j] = p_j.

    Drawn in blocks of at most BLOCK_ENTRIES uniforms (float32), so memory
    stays near the int8 result even for 10⁴ × 10⁴ rows.
    """
    count = check_int(count, "count", "sample_rows", low=0)
    biases = np.asarray(biases, dtype=float)
    rows = np.empty((count, biases.size), dtype=np.int8)
    threshold = ((1.0 + biases) / 2.0).astype(np.float32)
    block = max(1, BLOCK_ENTRIES // max(1, biases.size))
    for start in range(0, count, block):
        stop = min(count, start + block)
        plus = rng.random((stop - start, biases.size), dtype=np.float32) < threshold
        rows[start:stop] = 2 * plus.astype(np.int8) - 1
    return rows

