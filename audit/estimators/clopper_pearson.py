"""ε lower bound from one fixed test's error rates (Kairouz, Oh, Viswanath; Jagielski et al.).

Sound when the test (rejection set) was fixed before the counts were drawn,
i.e. chosen on a separate selection split: then FPR and FNR are binomial
proportions and their Clopper–Pearson upper bounds at β/2 each hold together
with probability ≥ 1 − β (union bound).
"""

from __future__ import annotations

import numpy as np

__all__ = ["epsilon_from_rates", "epsilon_lower_bound", "epsilon_objective", "rate_upper_bound"]

GUARD_TOLERANCE = 1e-9


def rate_upper_bound(count, n, beta):
    """Return the one-sided Clopper–Pearson upper confidence bound(s) at level 1 − beta.

    `count` of `n` (arrays broadcast); 1 where count = n. The upper end of
    statsmodels' `proportion_confint(count, n, alpha=2·beta, method="beta")`,
    the (1 − beta) quantile of Beta(count + 1, n − count), computed by the
    same scipy function it calls, without the lower end it would compute
    too (`tests/audit/estimators/test_clopper_pearson.py` checks they agree
    bit for bit). Then checked with the forward incomplete beta function:
    the inverse loses accuracy at n ≳ 10⁸ with few non-events and can
    return a value below the root, which would not be an upper bound; there
    the root is found again by bisection. Equal counts of one `n`
    (candidate tests that err alike) are computed once.
    """
    from scipy.special import betainccinv

    count = np.asarray(count, dtype=float)
    n = np.asarray(n, dtype=float)
    if count.ndim == 1 and n.ndim == 0 and len(count) > 1:  # many candidate tests share counts: each once
        distinct, inverse = np.unique(count, return_inverse=True)
        if len(distinct) < len(count):
            return rate_upper_bound(distinct, n, beta)[inverse]
    with np.errstate(invalid="ignore"):
        upper = betainccinv(count + 1, n - count, beta)
    upper = np.where(count >= n, 1.0, np.nan_to_num(upper, nan=1.0))
    return _raise_to_root(count, n, beta, upper)


def _raise_to_root(count: np.ndarray, n: np.ndarray, beta: float, upper: np.ndarray) -> np.ndarray:
    """Return `upper`, raised where P[Binomial(n, upper) ≤ count] > beta, to the smallest p where it is ≤ beta.

    P[Binomial(n, p) ≤ k] = 1 − I_p(k + 1, n − k); the bound must satisfy
    I_p(k + 1, n − k) ≥ 1 − beta. Disagreements below GUARD_TOLERANCE are
    rounding and are left alone.
    """
    from scipy.special import betainc

    count, n, upper = np.broadcast_arrays(count, n, upper)
    inside = count < n
    a, b = count + 1.0, np.where(inside, n - count, 1.0)
    bad = inside & (betainc(a, b, upper) < 1.0 - beta - GUARD_TOLERANCE)
    if not np.any(bad):
        return upper
    low, high = upper[bad], np.ones(int(bad.sum()))
    for _ in range(64):
        mid = 0.5 * (low + high)
        above = betainc(a[bad], b[bad], mid) >= 1.0 - beta
        high, low = np.where(above, mid, high), np.where(above, low, mid)
    fixed = upper.copy()
    fixed[bad] = high
    return fixed


def epsilon_objective(fpr, fnr, delta: float = 0.0):
    """Return max{log((1−δ−FPR)/FNR), log((1−δ−FNR)/FPR)} (KOV Thm 2.1), elementwise, unclamped.

    −inf where neither numerator is positive. Negative values still rank
    tests (a test nearer to certifying scores higher), which the clamped
    `epsilon_from_rates` cannot do.
    """
    fpr = np.asarray(fpr, dtype=float)
    fnr = np.asarray(fnr, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(np.maximum(1.0 - delta - fpr, 0.0) / fnr)
        b = np.log(np.maximum(1.0 - delta - fnr, 0.0) / fpr)
    return np.nan_to_num(np.maximum(a, b), nan=-np.inf, posinf=np.inf, neginf=-np.inf)


def epsilon_from_rates(fpr, fnr, delta: float = 0.0):
    """Return max{log((1−δ−FPR)/FNR), log((1−δ−FNR)/FPR), 0} (KOV Thm 2.1), elementwise.

    With *upper confidence bounds* for FPR and FNR this is an ε lower bound
    for (ε, δ)-DP at the confidence of those bounds.
    """
    return np.maximum(epsilon_objective(fpr, fnr, delta), 0.0)


def epsilon_lower_bound(fp, n0, fn, n1, *, delta: float = 0.0, beta: float = 0.05):
    """Return the certified ε lower bound of a fixed test with `fp` of `n0`, `fn` of `n1` errors.

    FPR = fp/n0 (outputs of D0 in the rejection set), FNR = fn/n1 (outputs of
    D1 outside it). Each rate gets a Clopper–Pearson upper bound at β/2; the
    result holds with probability ≥ 1 − β. Arrays broadcast (one bound each).
    """
    return np.maximum(_epsilon_bound_objective(fp, n0, fn, n1, delta=delta, beta=beta), 0.0)


def _epsilon_bound_objective(fp, n0, fn, n1, *, delta: float = 0.0, beta: float = 0.05):
    """Return `epsilon_lower_bound` before its clamp at 0 (−inf where nothing is certified).

    For ranking candidate tests: among tests that all certify nothing, the
    one nearest to certifying ranks first.
    """
    return epsilon_objective(
        rate_upper_bound(fp, n0, beta / 2), rate_upper_bound(fn, n1, beta / 2), delta
    )
