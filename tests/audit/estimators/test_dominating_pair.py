"""Dominating-pair test: its parts exactly, its level on the dominating pair itself, its power and edges."""

import numpy as np
import pytest
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators import dominating_pair as dp
from dpaudit.audit.estimators.gdp import gdp_lower_bound
from dpaudit.audit.estimators.thresholds import (
    DEFAULT_SHARES,
    DominatingPair,
    SimultaneousBands,
    error_counts,
    threshold_lower_bound,
)
from dpaudit.errors import DPAuditError
from scipy.stats import binom, norm

BETA = 0.025


def _roc(envelope, theta, s):
    """The envelope R*_θ(s): the most power a test of level s may have under the null θ."""
    if isinstance(envelope, dp.GaussianDP):
        return norm.cdf(norm.ppf(s) + theta)
    d = envelope.delta
    return np.minimum(1.0, np.minimum(d + np.exp(theta) * s, 1.0 - np.exp(-theta) * (1.0 - d - s)))


ENVELOPES = [dp.ApproximateDP(0.0), dp.ApproximateDP(1e-3), dp.GaussianDP()]


@pytest.mark.parametrize("envelope", ENVELOPES, ids=["pure", "delta", "gdp"])
def test_critical_parameter_is_the_least_that_lifts_the_envelope_to_w(envelope):
    rng = np.random.default_rng(0)
    w, u = rng.random(5000), rng.random(5000)
    theta = envelope.critical(w, u)
    assert np.all(theta >= 0.0) and np.all(np.isfinite(theta))
    assert np.all(_roc(envelope, theta, u) >= w - 1e-9)
    below = np.maximum(theta - 1e-6, 0.0)
    assert np.all((theta == 0.0) | (_roc(envelope, below, u) < w))


def test_order_statistics_have_the_moments_of_sorted_uniforms():
    n, reps = 50, 100_000
    ranks = np.array([1, 2, 17, 49, 50])
    draws = dp.uniform_order_statistics(np.random.default_rng(1), ranks, n, reps)
    assert np.all(np.diff(draws, axis=1) > 0.0)
    mean = ranks / (n + 1)
    sd = np.sqrt(ranks * (n - ranks + 1) / ((n + 1) ** 2 * (n + 2)))
    assert np.all(np.abs(draws.mean(axis=0) - mean) <= 5 * sd / np.sqrt(reps))
    assert np.all(np.abs(draws.std(axis=0) / sd - 1.0) <= 5 * np.sqrt(2.0 / reps))


def test_prefix_counts_break_ties_uniformly_at_random():
    high, low = np.array([3.0, 3.0, 1.0]), np.array([3.0, 2.0, 1.0, 0.0])
    rng = np.random.default_rng(2)
    first_three = []
    for _ in range(3000):
        a, b, t = dp.prefix_counts(high, low, rng)
        assert t.tolist() == [3, 3, 3, 2, 1, 1, 0] and (a + b).tolist() == list(range(1, 8))
        assert a[2] == 2 and a[3] == 2 and a[5] == 3 and a[6] == 3
        first_three.append(a[0])
    # The first of the three tied 3s is IN with probability 2/3.
    assert abs(np.mean(first_three) - 2 / 3) <= 5 * np.sqrt(2 / 9 / 3000)


def test_checkpoints_are_dense_then_geometric_and_end_at_n():
    assert dp.rank_checkpoints(7).tolist() == list(range(1, 8))
    ranks = dp.rank_checkpoints(100_000)
    assert ranks[: dp.DENSE].tolist() == list(range(1, dp.DENSE + 1)) and ranks[-1] == 100_000
    assert np.all(ranks[dp.DENSE:] / ranks[dp.DENSE - 1:-1] <= dp.RATIO + 1.0 / dp.DENSE)


def _dominating_pair_scores(envelope, theta, rng, m):
    """IN and OUT scores drawn from the envelope's dominating pair at θ: the exactly worst case."""
    w = rng.random(m)
    if isinstance(envelope, dp.GaussianDP):
        return rng.normal(size=m) + theta, rng.normal(size=m)
    d, e = envelope.delta, np.exp(theta)
    kink = d + e * (1.0 - d) / (1.0 + e)
    placement = np.where(w <= d, -1.0, np.where(w <= kink, (w - d) / e, 1.0 - d - e * (1.0 - w)))
    return -placement, -rng.random(m)


@pytest.mark.parametrize("envelope", ENVELOPES, ids=["pure", "delta", "gdp"])
def test_level_holds_on_the_dominating_pair_itself(envelope):
    seeds, m, theta = 1000, 60, 1.0
    above = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        high, low = _dominating_pair_scores(envelope, theta, rng, m)
        test = dp.rank_test(high, low, envelope=envelope, beta=BETA, replicates=1000, rng=rng)
        above += test.value > theta
    assert above <= binom.isf(1e-4, seeds, BETA)


def test_level_holds_on_randomized_response_scores_with_ties():
    """Two score values, IN on the high one w.p. e/(1 + e): ε = 1 exactly, every score tied."""
    seeds, m, theta = 1000, 60, 1.0
    above = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        keep = np.e / (1.0 + np.e)
        high, low = (rng.random(m) < keep).astype(float), (rng.random(m) >= keep).astype(float)
        test = dp.rank_test(high, low, envelope=dp.ApproximateDP(0.0), beta=BETA, replicates=1000, rng=rng)
        above += test.value > theta
    assert above <= binom.isf(1e-4, seeds, BETA)


def test_randomness_is_independent_of_scores_drawn_with_the_same_seed():
    """Tied scores drawn by default_rng(s), the estimator given s: its tie-breaking must not reuse those draws.

    Binomial(10, 0.65) against Binomial(10, 0.35) scores: the true ε is
    log((0.65/0.35)^10) = 6.19; reusing the draws broke ties OUT-last and certified 6.5.
    """
    truth = 10 * np.log(0.65 / 0.35)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        obs = Observations.from_in_out(rng.binomial(10, 0.65, 100_000).astype(float),
                                       rng.binomial(10, 0.35, 100_000).astype(float))
        assert threshold_lower_bound(obs, delta=0.0, rng=seed).epsilon < truth


def test_bound_is_stronger_than_the_bands_on_gaussian_scores():
    gains = []
    for seed in range(10):
        rng = np.random.default_rng(seed)
        obs = Observations.from_in_out(rng.normal(1.0, 1.0, 200), rng.normal(size=200))
        pair = threshold_lower_bound(obs, delta=1e-5, rng=seed).epsilon
        bands = threshold_lower_bound(obs, delta=1e-5, strategy=SimultaneousBands(), rng=seed).epsilon
        gains.append(pair - bands)
    assert np.mean(gains) > 0.0


@pytest.mark.parametrize("direction", ["IN above", "OUT below"])
def test_reported_test_counts_are_those_of_its_threshold(direction):
    """A tenth of the IN scores far above, or of the OUT scores far below: only one direction sees it."""
    rng = np.random.default_rng(3)
    shifted = rng.normal(size=300) + np.where(rng.random(300) < 0.1, 6.0, 0.0)
    plain = rng.normal(size=300)
    obs = Observations.from_in_out(shifted, plain) if direction == "IN above" else (
        Observations.from_in_out(plain, -shifted))
    lb = threshold_lower_bound(obs, delta=1e-5, confidence=0.95, rng=3)
    assert lb.method == "dominating-pair" and lb.epsilon > 0.5 and lb.details["direction"] == direction
    fp, _, fn, _ = error_counts(obs, [lb.details["threshold"]])
    assert (lb.details["fp"], lb.details["fn"]) == (int(fp[0]), int(fn[0]))


def test_gdp_bound_states_mu_from_the_gaussian_dominating_pair():
    rng = np.random.default_rng(4)
    obs = Observations.from_in_out(rng.normal(2.0, 1.0, 500), rng.normal(size=500))
    lb = gdp_lower_bound(obs, delta=1e-5, strategy=DominatingPair(), rng=4)
    assert lb.details["strategy"] == "dominating-pair" and 1.0 < lb.details["mu"] < 2.0
    default = gdp_lower_bound(obs, delta=1e-5, rng=4)
    assert default.details["chosen"] in ("dominating-pair", "simultaneous-bands") and 1.0 < default.details["mu"] < 2.0


def test_too_few_replicates_is_one_sentence():
    obs = Observations.from_in_out(np.arange(10.0), np.arange(10.0) - 3)
    with pytest.raises(DPAuditError, match="needs at least 40 replicates; got 10"):
        threshold_lower_bound(obs, delta=0.0, strategy=DominatingPair(replicates=10), rng=0)


def test_default_replicates_keep_twenty_below_the_bound_at_any_confidence():
    assert dp.default_replicates(0.025) == dp.MIN_REPLICATES
    assert dp.default_replicates(5e-4) == 40_000
    obs = Observations.from_in_out(np.arange(30.0) + 30, np.arange(30.0))
    lb = threshold_lower_bound(obs, delta=1e-5, confidence=0.999, strategy=DominatingPair(), rng=0)
    assert lb.details["replicates"] == 40_000 and lb.epsilon > 0.0


def test_same_seed_same_bound():
    rng = np.random.default_rng(5)
    obs = Observations.from_in_out(rng.normal(1.0, 1.0, 100), rng.normal(size=100))
    first, second = (threshold_lower_bound(obs, delta=0.0, rng=7).epsilon for _ in range(2))
    assert first == second


def _gdp_scores(n: int, seed: int = 5) -> Observations:
    """Scores of a 1-GDP law: IN shifted by 1 (true ε 2.32 at δ = 0.01)."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.5
    return Observations(scores=truth + rng.normal(0, 1, n), truth=truth)


def test_at_delta_the_default_bound_grows_with_the_evidence_and_stays_below_the_truth():
    # Before the δ atoms were netted out, this leak was certified 1.83 from 2000 runs and 0.0 from 20 000 and 200 000.
    bounds = [threshold_lower_bound(_gdp_scores(n), delta=0.01, rng=5).epsilon for n in (2000, 20_000, 200_000)]
    assert 1.0 < bounds[0] < bounds[1] < bounds[2] < 2.32


@pytest.mark.parametrize("n, seed", [(2000, 1), (20_000, 2), (200_000, 3)])
def test_the_default_is_never_below_either_strategy_at_its_share_of_beta(n, seed):
    obs = _gdp_scores(n, seed)
    default = threshold_lower_bound(obs, delta=0.01, rng=seed)
    alone = [threshold_lower_bound(obs, delta=0.01, confidence=1 - 0.05 * share, strategy=s, rng=seed).epsilon
             for s, share in zip((DominatingPair(), SimultaneousBands()), DEFAULT_SHARES)]
    assert default.epsilon >= max(alone) - 1e-12 and default.details["chosen"] in ("dominating-pair", "simultaneous-bands")


def test_at_delta_the_dominating_pair_keeps_its_level_on_its_own_worst_pair():
    # The (ε, δ) worst pair with a δ atom: IN placements −V with V ~ R*, OUT −U uniform; over 200 seeds the bound
    # may exceed the true ε at most at rate β = 0.05 (99.9% binomial allowance).
    envelope, theta, m = dp.ApproximateDP(0.01), 0.5, 3000
    grid = np.linspace(0, 1, 200_001)
    roc = _roc(envelope, theta, grid)
    over = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        placements = np.interp(rng.random(m), roc, grid)
        obs = Observations.from_in_out(-placements, -rng.random(m))
        over += threshold_lower_bound(obs, delta=0.01, strategy=DominatingPair(), rng=seed).epsilon > theta
    assert over <= binom.ppf(0.999, 200, 0.05)
