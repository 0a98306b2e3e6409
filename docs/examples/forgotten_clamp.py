"""A sum that means to clamp its records to [0, 1] and forgets the upper bound, for `dpaudit audit ... --hunt`.

`forgotten_clamp:buggy` clamps from below only; `forgotten_clamp:fixed` clamps
both ways. Both add Laplace noise of scale 1 (sensitivity 1, ε = 1), take
any finite number as a record (they say they clamp), and have a default
pair inside [0, 1], on which the bug does not show: `--hunt` finds it.
"""

import math

import numpy as np
from dpaudit.mechanisms import blackbox
from dpaudit.mechanisms.neighbours import records_in


def clamped_sum_missing_upper(data, rng, size):
    """Return sum(max(x, 0)) + Laplace(1): BUGGY, a record above 1 moves the sum by more than 1."""
    return np.sum(np.maximum(np.asarray(data, float), 0.0)) + rng.laplace(0.0, 1.0, size)


def clamped_sum(data, rng, size):
    """Return sum(clip(x, 0, 1)) + Laplace(1): 1-DP under add-remove."""
    return np.sum(np.clip(np.asarray(data, float), 0.0, 1.0)) + rng.laplace(0.0, 1.0, size)


ANY_NUMBER = records_in(-math.inf, math.inf)
buggy = blackbox(clamped_sum_missing_upper, epsilon=1.0, neighbours=ANY_NUMBER, default_pair=([0.5, 0.5], [0.5, 0.5, 1.0]))
fixed = blackbox(clamped_sum, epsilon=1.0, neighbours=ANY_NUMBER, default_pair=([0.5, 0.5], [0.5, 0.5, 1.0]))
