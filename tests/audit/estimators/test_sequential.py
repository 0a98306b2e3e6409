"""Beta-binomial mixture confidence sequences: their ends, their level under continuous monitoring, their width."""

import math

import numpy as np
import pytest
from dpaudit.audit.estimators.clopper_pearson import rate_upper_bound
from dpaudit.audit.estimators.sequential import BetaPrior, RateSequence, TwoRatesSequence, log_wealth, mixture_interval
from dpaudit.errors import InvalidParameterError
from scipy.stats import binom

LOOKS = np.unique(np.geomspace(1, 4000, 60).astype(int))
"""The looks of the monitoring tests (about 60, geometric up to 4000 draws): Ville's inequality bounds a miss at any
time, so at these; a fixed-n interval looked at as often misses more than its level (below)."""


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (90, 900_000), (162_000, 900_000), (1, 2)])
def test_the_ends_are_where_the_wealth_reaches_one_over_alpha_and_never_inside(k, n):
    alpha, prior = 0.05, BetaPrior.tuned(max(k, 1) / n, n, 0.05)
    lower, upper = mixture_interval(k, n, alpha, prior)
    assert 0.0 <= lower <= k / n <= upper <= 1.0
    assert log_wealth(k, n, k / n, prior) < math.log(1 / alpha)
    for end, inward in ((upper, -1), (lower, 1)):
        if 0.0 < end < 1.0:
            assert log_wealth(k, n, end, prior) >= math.log(1 / alpha)  # rounding never narrows the interval
            near = end + inward * max(end * 1e-6, 1e-12)
            assert log_wealth(k, n, near, prior) < math.log(1 / alpha)  # and it is the root, not far outside it


def _crossed(stream: np.ndarray, p: float, alpha: float, upper_of) -> bool:
    counts = np.cumsum(stream)
    return any(upper_of(int(counts[t - 1]), int(t)) < p for t in LOOKS)


@pytest.mark.parametrize("p", [0.3, 0.02])
def test_the_upper_end_misses_the_true_rate_at_some_look_at_most_alpha_of_the_time(p):
    alpha, seeds = 0.1, 300
    rng = np.random.default_rng(7)
    prior = BetaPrior.tuned(p, 1000, alpha)

    def above_upper_end(k: int, n: int) -> float:  # p above the upper end: M_n(p) ≥ 1/α on the right of k/n (first test)
        return 0.0 if p > k / n and log_wealth(k, n, p, prior) >= math.log(1 / alpha) else 1.0

    misses = sum(_crossed(rng.random(LOOKS[-1]) < p, p, alpha, above_upper_end) for _ in range(seeds))
    assert misses <= binom.ppf(0.999, seeds, alpha)


def test_a_fixed_n_interval_looked_at_as_often_misses_more_than_alpha():
    """The schedule of the test above has the power to catch an interval that is not anytime-valid."""
    p, alpha, seeds = 0.3, 0.1, 300
    rng = np.random.default_rng(7)
    misses = sum(_crossed(rng.random(LOOKS[-1]) < p, p, alpha, lambda k, n: float(rate_upper_bound(k, n, alpha)))
                 for _ in range(seeds))
    assert misses > binom.ppf(0.999, seeds, alpha)


@pytest.mark.parametrize("p, n", [(0.3, 1000), (0.18, 900_000), (1e-4, 900_000)])
def test_a_tuned_prior_is_within_the_normal_mixture_width_of_clopper_pearson_at_its_target(p, n):
    """Normal approximation: the margin is z_mix / z_fixed ≈ 1.6 times Clopper–Pearson's at α = 0.025."""
    alpha, k = 0.025, round(p * n)
    upper = mixture_interval(k, n, alpha, BetaPrior.tuned(p, n, alpha))[1]
    fixed = float(rate_upper_bound(k, n, alpha))
    assert 1.0 < (upper - k / n) / (fixed - k / n) < 1.7


def test_running_ends_only_narrow_and_two_rates_give_kov_epsilon_of_their_upper_ends():
    seq = TwoRatesSequence.start(0.05, 0.1, 0.1, 10_000)
    seen = []
    for _ in range(5):
        seq = seq.add(100, 1000, 100, 1000)
        seen.append((seq.fpr.upper, seq.fpr.lower, seq.epsilon(0.0)))
    uppers, lowers, epsilons = zip(*seen)
    assert list(uppers) == sorted(uppers, reverse=True) and list(lowers) == sorted(lowers)
    assert epsilons[-1] == pytest.approx(math.log((1 - seq.fpr.upper) / seq.fnr.upper))
    assert seq.fpr.alpha == seq.fnr.alpha == 0.025
    assert seq.reachable(10**6, 0.0) > seq.epsilon(0.0)


def test_a_bad_prior_is_one_sentence():
    with pytest.raises(InvalidParameterError, match="a > 0 and b > 0"):
        RateSequence(BetaPrior(0.0, 1.0), 0.05)
