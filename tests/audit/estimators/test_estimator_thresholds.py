"""Threshold estimator: counts, the price of the threshold choice, soundness and tightness.

Tightness tests use deterministic score grids (quantile functions of an even
grid of probabilities, as jax_privacy's auditing tests do): the counts at any
threshold are then the exact rates times n, up to one, so the expected bound
is computed from the exact rates and never flakes.
"""

import numpy as np
import pytest
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.clopper_pearson import epsilon_lower_bound
from dpaudit.audit.estimators.thresholds import (
    Bonferroni,
    Split,
    error_counts,
    tail_candidates,
    threshold_lower_bound,
)
from dpaudit.errors import DPAuditError
from scipy.stats import binom, laplace


def _grid(n: int) -> np.ndarray:
    return (np.arange(n) + 0.5) / n


def _laplace_obs(n: int, epsilon: float = 1.0) -> Observations:
    """IN = Laplace(1/ε) noise on 1, OUT on 0: ε-DP, tight at ε."""
    out = laplace.ppf(_grid(n)) / epsilon
    return Observations.from_in_out(out + 1.0, out)


def test_error_counts_match_brute_force():
    rng = np.random.default_rng(0)
    obs = Observations(scores=rng.integers(0, 5, 200).astype(float), truth=rng.random(200) < 0.4)
    thresholds = np.array([-1.0, 0.0, 2.0, 2.5, 4.0, 9.0])
    fp, n0, fn, n1 = error_counts(obs, thresholds)
    for k, t in enumerate(thresholds):
        assert fp[k] == np.sum(obs.out_scores >= t) and fn[k] == np.sum(obs.in_scores < t)
    assert (n0, n1) == (obs.n_out, obs.n_in)


def test_bonferroni_grid_pays_beta_over_k():
    obs = _laplace_obs(2000)
    grid = (0.0, 0.5, 1.0, 2.0)
    lb = threshold_lower_bound(obs, delta=0.0, confidence=0.9,
                               strategy=Bonferroni(thresholds=grid), rng=0)
    fp, n0, fn, n1 = error_counts(obs, grid)
    expected = epsilon_lower_bound(fp, n0, fn, n1, delta=0.0, beta=0.1 / 4).max()
    assert lb.epsilon == pytest.approx(expected, rel=1e-12)
    assert lb.details["thresholds_tried"] == 4
    assert lb.details["beta_per_threshold"] == pytest.approx(0.1 / 4)
    assert lb.assumption is None and lb.method == "clopper-pearson"


def _oracle(n: int, beta: float, thresholds: np.ndarray) -> float:
    """Best bound at these thresholds from the exact Laplace rates with n samples per class."""
    fpr, fnr = laplace.sf(thresholds), laplace.cdf(thresholds - 1.0)
    return float(epsilon_lower_bound(fpr * n, n, fnr * n, n, delta=0.0, beta=beta).max())


def test_laplace_fixed_grid_is_sound_and_matches_exact_rates():
    n = 100_000
    grid = np.linspace(-1.0, 4.0, 11)
    lb = threshold_lower_bound(_laplace_obs(n), delta=0.0,
                               strategy=Bonferroni(thresholds=grid), rng=0)
    assert lb.epsilon <= 1.0
    # Grid counts differ from n·rate by less than one: the bounds agree closely.
    assert lb.epsilon == pytest.approx(_oracle(n, 0.05 / grid.size, grid), abs=2e-3)


@pytest.mark.parametrize("strategy", [Split(), Bonferroni(count=10)])
def test_laplace_data_chosen_thresholds_are_sound_and_tight(strategy):
    n = 100_000
    lb = threshold_lower_bound(_laplace_obs(n), delta=0.0, strategy=strategy, rng=1)
    # The best single fixed test on the estimation half (exact rates) is the target.
    target = _oracle(n // 2, 0.05, np.linspace(-3.0, 6.0, 2001))
    assert lb.epsilon <= 1.0
    assert lb.epsilon >= 0.9 * target


def test_tail_candidates_cover_both_extremes():
    scores = np.arange(10_000.0)
    cands = tail_candidates(scores, per_side=50)
    assert cands.size <= 100
    assert {0.0, 1.0, 9998.0, 9999.0} <= set(cands.tolist())


def _allowed_false_positives(seeds: int, beta: float) -> int:
    """Largest count of seeds with a positive bound that a sound estimator exceeds w.p. ≤ 1e-4."""
    return int(binom.isf(1e-4, seeds, beta))


@pytest.mark.parametrize("confidence", [0.95, 0.7])
@pytest.mark.parametrize("strategy", [Split(), Bonferroni(count=5, fraction=0.2),
                                      Bonferroni(thresholds=(-1.0, 0.0, 1.0))])
def test_null_scores_certify_zero_except_at_rate_beta(strategy, confidence):
    """IN and OUT scores from one distribution: a positive bound is an error, at rate ≤ β."""
    seeds, beta = 200, 1 - confidence
    positive = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        obs = Observations.from_in_out(rng.normal(size=100), rng.normal(size=100))
        lb = threshold_lower_bound(obs, delta=0.0, confidence=1 - beta, strategy=strategy, rng=rng)
        positive += lb.epsilon > 0.0
    assert positive <= _allowed_false_positives(seeds, beta)


@pytest.mark.parametrize(
    "make",
    [lambda: Split(fraction=0.0),
     lambda: Bonferroni(thresholds=(1.0,), count=2), lambda: Bonferroni(thresholds=(np.inf,)),
     lambda: Bonferroni(count=-1), lambda: Bonferroni(thresholds=("a",))],
)
def test_invalid_strategies_raise(make):
    with pytest.raises(DPAuditError):
        make()


def test_invalid_inputs_raise():
    obs = _laplace_obs(100)
    with pytest.raises(DPAuditError):
        threshold_lower_bound(obs, delta=1.0, rng=0)
    with pytest.raises(DPAuditError):
        threshold_lower_bound(obs, delta=0.0, confidence=1.0, rng=0)
    with pytest.raises(DPAuditError):
        threshold_lower_bound(obs, delta=0.0, strategy="split", rng=0)
    with pytest.raises(DPAuditError):
        threshold_lower_bound(Observations.from_in_out([1.0, 2.0], []), delta=0.0, rng=0)


def test_clopper_pearson_upper_bound_stays_above_the_estimate_at_huge_n():
    # scipy's inverse incomplete beta returns 1 − 7.6e-6 here, below the observed 1 − 5e-6;
    # the exact root (mpmath, 30 digits) is 1 − 4.694866e-6.
    from dpaudit.audit.estimators.clopper_pearson import rate_upper_bound

    n = 200_000_000
    upper = float(rate_upper_bound(n - 1000, n, 0.025))
    assert upper > (n - 1000) / n
    assert 1.0 - upper == pytest.approx(4.694866e-6, rel=1e-5)


def _top_leak_obs(m: int) -> Observations:
    """Grid N(0, 1) scores for m/2 IN and m/2 OUT canaries; the top 1% of IN scores moved up by 10."""
    from scipy.stats import norm

    base = norm.ppf(_grid(m // 2))
    leaked = base.copy()
    leaked[-(m // 200):] += 10.0
    return Observations.from_in_out(leaked, base)


@pytest.mark.parametrize("seed", range(6))
def test_top_one_percent_leak_is_found_when_every_candidate_clamps_to_zero(seed):
    """At m = 10⁴ every candidate's projected bound is ≤ 0; ranking on the clamp picked the lowest threshold."""
    lb = threshold_lower_bound(_top_leak_obs(10_000), delta=1e-5, strategy=Split(), rng=seed)
    assert lb.epsilon > 0.0
    assert lb.details["threshold"] > 3.0
