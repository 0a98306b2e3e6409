"""Soundness: a correct mechanism is flagged in at most a fraction 1 − confidence of audits."""

import numpy as np
import pytest
from dpaudit.audit import audit_mechanism
from dpaudit.mechanisms import get_mechanism
from scipy.stats import binom

SEEDS = 200
CONFIDENCE = 0.9


@pytest.mark.parametrize("interval", ["two-rates", "ratio"])
def test_false_violation_rate_is_at_most_beta(interval):
    # Binary randomized response is exactly tight: its best test attains ε, so the
    # bound is above the claim only through the confidence bounds failing.
    mech = get_mechanism("randomized_response", epsilon=1.0)
    flags = sum(
        audit_mechanism(mech, trials=3000, seed=s, confidence=CONFIDENCE, interval=interval).verdict == "violation"
        for s in range(SEEDS)
    )
    # Allowed: the 1 − 1e-6 quantile of Binomial(SEEDS, β), so a sound estimator fails this test
    # with probability below 1e-6, while a bound that ignored the split would exceed it.
    assert flags <= binom.ppf(1 - 1e-6, SEEDS, 1 - CONFIDENCE)


def test_lower_bound_never_exceeds_truth_on_average_and_is_tight():
    bounds = np.array([
        audit_mechanism(get_mechanism("laplace"), trials=20_000, seed=s).lower_bound.epsilon for s in range(20)
    ])
    assert np.mean(bounds > 1.0) <= binom.ppf(1 - 1e-6, 20, 0.05) / 20
    assert np.median(bounds) > 0.85


def test_ratio_interval_is_tighter_than_two_rates():
    def median_bound(interval: str) -> float:
        return float(np.median([
            audit_mechanism(get_mechanism("laplace"), trials=20_000, seed=s, interval=interval).lower_bound.epsilon
            for s in range(9)
        ]))

    # At equal counts the ratio interval's margin below the truth is about 0.55× that of the two rates at 95%.
    assert median_bound("ratio") > median_bound("two-rates") + 0.01
