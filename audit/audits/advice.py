"""Advice for an audit that found no violation: how many trials would likely certify one."""

from __future__ import annotations

import numpy as np
from dpaudit.audit.estimators.clopper_pearson import epsilon_lower_bound, rate_upper_bound

__all__ = ["trials_for_violation"]

MAX_ADVISED = 10**10
ADVICE_LEVEL = 0.05


def trials_for_violation(fp: int, n0: int, fn: int, n1: int, *, claim: float, delta: float, beta: float) -> int | None:
    """Return the fewest trials per dataset (a power of two) at which the same test would likely certify ε > `claim`.

    A projection, not a bound: it takes the held-out rates of the test at
    their Clopper–Pearson upper bounds at ADVICE_LEVEL (so a tight, correct
    mechanism whose rates merely look a little better by chance gets no
    advice, but in about ADVICE_LEVEL of its audits) as the true rates, and
    asks at which sample size the audit's bound at failure probability
    `beta` would pass the claim. None when no size up to MAX_ADVISED would.
    """
    if min(n0, n1) == 0:
        return None
    fpr, fnr = rate_upper_bound(fp, n0, ADVICE_LEVEL), rate_upper_bound(fn, n1, ADVICE_LEVEL)
    sizes = 2 ** np.arange(4, int(np.log2(MAX_ADVISED)) + 1)
    bounds = epsilon_lower_bound(fpr * sizes, sizes, fnr * sizes, sizes, delta=delta, beta=beta)
    passing = np.flatnonzero(np.asarray(bounds) > claim)
    return int(sizes[passing[0]]) if passing.size else None
