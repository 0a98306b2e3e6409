"""Pure-ε lower bound from one Clopper–Pearson interval on a ratio of Poisson rates.

If the number of trials on each dataset is itself Poisson(λ), drawn
independently (Poissonization), the count of outputs falling in a fixed event
S is Poisson(λ·P0(S)) on D0 and Poisson(λ·P1(S)) on D1, independently. Given
their sum K, the D1 count is then exactly Binomial(K, r) with
r = P1(S) / (P0(S) + P1(S)) (the conditional test of two Poisson means,
Przyborowski & Wileński 1940; Lehmann & Romano, *Testing Statistical
Hypotheses*, §4.5). ε-DP bounds P1(S)/P0(S) = r/(1 − r) by e^ε, so a
Clopper–Pearson lower bound r₋ at level β gives, with probability ≥ 1 − β,

    ε ≥ log(r₋ / (1 − r₋)).

This is one exact binomial bound at the full β, where the two-rates bound
(`clopper_pearson.epsilon_lower_bound`) needs two at β/2 each: at equal
counts its margin is about √2·z(β) / (2·z(β/2)) ≈ 0.55 of theirs at 90%, worth
some three times the samples. It needs the event and the direction (which
dataset is in the numerator) fixed before the counts are drawn, and δ = 0.
"""

from __future__ import annotations

import numpy as np
from dpaudit.audit.estimators.clopper_pearson import rate_upper_bound

__all__ = ["kov_ratio_bounds", "ratio_epsilon_bound"]


def ratio_epsilon_bound(numerator, denominator, beta):
    """Return the certified log(P_num(S)/P_den(S)) lower bound from the event's counts on the two datasets.

    `numerator`, `denominator`: counts of S among Poisson(λ) trials on each
    dataset (same λ; arrays broadcast; non-integer counts are allowed, for
    projections). 0 when the bound is not positive or nothing was counted.
    """
    numerator = np.asarray(numerator, dtype=float)
    total = numerator + np.asarray(denominator, dtype=float)
    rest = rate_upper_bound(total - numerator, np.maximum(total, 1.0), beta)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.log1p(-rest) - np.log(rest)
    return np.maximum(np.where(total > 0, np.nan_to_num(bound, nan=0.0, neginf=0.0), 0.0), 0.0)


def kov_ratio_bounds(fp, n0, fn, n1, beta):
    """Return the two bounds of Kairouz–Oh–Viswanath at δ = 0, each from one ratio interval at level β.

    Stacked on a new first axis: [log(P1(S)/P0(S)), log(P0(Sᶜ)/P1(Sᶜ))], with
    S the rejection set, `fp` of the `n0` outputs of D0 in S and `fn` of the
    `n1` outputs of D1 outside it. Each entry alone is sound at 1 − β when
    its direction was fixed in advance; taking their maximum is not.
    """
    fp, fn = np.asarray(fp, dtype=float), np.asarray(fn, dtype=float)
    return np.stack([ratio_epsilon_bound(n1 - fn, fp, beta), ratio_epsilon_bound(n0 - fp, fn, beta)])
