"""Soundness of every score estimator across many seeds.

Under the null (IN and OUT scores from one law, continuous or with ties) a
positive bound is an error; on exactly tight scores (Laplace-shaped for the
(ε, δ) estimators, Gaussian for the GDP ones) a bound above the truth is an
error. Each may happen in at most a fraction β = 1 − confidence of the
seeds; the allowed count is the binomial quantile that a sound estimator
exceeds with probability ≤ 1e-4. "one-run" (δ = 0) and "one-run-joint-delta" (δ = 10⁻⁵)
run the joint test of the rules, "one-run-bonferroni" the weighted
Bonferroni one; "one-run-delta" runs at δ = 10⁻³, where mδ is large against β
(Bonferroni with the coupling bound's regime). The default run uses 1000
seeds of small games (a few seconds per estimator), LONG_ESTIMATORS 250 of
them, with their 1000 in the slow run; the slow run adds 1000 seeds of 10⁴
canaries.
"""

import numpy as np
import pytest
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.gdp import gdp_lower_bound
from dpaudit.audit.estimators.one_run.binomial import one_run_lower_bound
from dpaudit.audit.estimators.one_run.fdp import one_run_fdp_lower_bound
from dpaudit.audit.estimators.thresholds import (
    BestOf,
    Bonferroni,
    DominatingPair,
    SimultaneousBands,
    Split,
    threshold_lower_bound,
)
from scipy.stats import binom

BETA = 0.05


def _allowed(seeds: int) -> int:
    return int(binom.isf(1e-4, seeds, BETA))


def _threshold(strategy):
    return lambda obs, rng: threshold_lower_bound(obs, delta=0.0, strategy=strategy, rng=rng).epsilon


def _gdp(strategy):
    return lambda obs, rng: gdp_lower_bound(obs, delta=1e-5, strategy=strategy, rng=rng).details["mu"]


ESTIMATORS = {
    "threshold-default": _threshold(BestOf()),
    "gdp-default": _gdp(BestOf()),
    "threshold-dominating-pair": _threshold(DominatingPair()),
    "gdp-dominating-pair": _gdp(DominatingPair()),
    "threshold-bands": _threshold(SimultaneousBands()),
    "threshold-split": _threshold(Split()),
    "threshold-bonferroni": _threshold(Bonferroni()),
    "gdp-bands": _gdp(SimultaneousBands()),
    "gdp-split": _gdp(Split()),
    "one-run": lambda obs, rng: one_run_lower_bound(obs, delta=0.0, rng=rng).epsilon,
    "one-run-joint-delta": lambda obs, rng: one_run_lower_bound(obs, delta=1e-5, rng=rng).epsilon,
    "one-run-bonferroni": lambda obs, rng: one_run_lower_bound(obs, delta=0.0, calibration="bonferroni", rng=rng).epsilon,
    "one-run-delta": lambda obs, rng: one_run_lower_bound(obs, delta=1e-3, rng=rng).epsilon,
    "one-run-fdp": lambda obs, rng: one_run_fdp_lower_bound(obs, delta=1e-5, rng=rng).details["mu"],
}
GDP = {"gdp-default", "gdp-dominating-pair", "gdp-bands", "gdp-split", "one-run-fdp"}
LONG_ESTIMATORS = {"threshold-default", "gdp-default", "threshold-dominating-pair", "gdp-dominating-pair", "one-run",
                   "one-run-joint-delta"}
"""A minute or more per 1000 seeds: 250 in the default run, 1000 in the slow one (one-run: the joint test)."""


def _default_seeds(name: str) -> int:
    return 250 if name in LONG_ESTIMATORS else 1000


def _null(rng: np.random.Generator, m: int, ties: bool) -> Observations:
    scores = rng.integers(0, 4, m).astype(float) if ties else rng.normal(size=m)
    return Observations(scores=scores, truth=rng.random(m) < 0.5)


def _tight(name: str, rng: np.random.Generator, m: int) -> tuple[Observations, float]:
    """Scores whose trade-off is exactly that of the truth returned: ε = 1 (Laplace) or μ = 1 (Gaussian)."""
    truth = rng.random(m) < 0.5
    noise = rng.normal(size=m) if name in GDP else rng.laplace(size=m)
    return Observations(scores=noise + truth, truth=truth), 1.0


def _count_null(name: str, seeds: int, m: int, ties: bool) -> int:
    estimate = ESTIMATORS[name]
    return sum(estimate(_null(np.random.default_rng(s), m, ties), s) > 0.0 for s in range(seeds))


def _count_above_truth(name: str, seeds: int, m: int) -> int:
    estimate = ESTIMATORS[name]
    above = 0
    for s in range(seeds):
        obs, truth = _tight(name, np.random.default_rng(s), m)
        above += estimate(obs, s) > truth
    return above


@pytest.mark.parametrize("ties", [False, True], ids=["continuous", "ties"])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_null_scores_certify_nothing_except_at_rate_beta(name, ties):
    seeds = _default_seeds(name)
    assert _count_null(name, seeds, 200, ties) <= _allowed(seeds)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_tight_scores_are_not_overestimated_except_at_rate_beta(name):
    seeds = _default_seeds(name)
    assert _count_above_truth(name, seeds, 400) <= _allowed(seeds)


GAMES = {"small": (200, 400), "large": (10_000, 10_000)}
"""Canaries per game of the null and of the tight runs."""
SLOW_CASES = [(name, "small") for name in sorted(LONG_ESTIMATORS)] + [(name, "large") for name in sorted(ESTIMATORS)]
"""The slow run: 1000 seeds of small games for LONG_ESTIMATORS, 1000 of large games for every estimator."""


@pytest.mark.slow
@pytest.mark.parametrize("ties", [False, True], ids=["continuous", "ties"])
@pytest.mark.parametrize("name, games", SLOW_CASES)
def test_null_scores_over_1000_seeds(name, games, ties):
    seeds = 1000
    assert _count_null(name, seeds, GAMES[games][0], ties) <= _allowed(seeds)


@pytest.mark.slow
@pytest.mark.parametrize("name, games", SLOW_CASES)
def test_tight_scores_over_1000_seeds(name, games):
    seeds = 1000
    assert _count_above_truth(name, seeds, GAMES[games][1]) <= _allowed(seeds)
