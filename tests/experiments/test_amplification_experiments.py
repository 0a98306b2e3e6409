"""`amplification-sampling` and `amplification-shuffling`: the formulas of their docstrings.

Sampling tests allow Z standard errors of the sample size (fixed seeds; a
correct formula fails with probability below 6·10⁻⁷ per check). Two
evaluations of one formula in different arithmetic agree to REL (rounding).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dpaudit.audit.theory.amplification import poisson_subsampled, shuffled_epsilon, shuffling_condition, smith_subsampled
from dpaudit.experiments import amplification_shuffling as shuffling
from dpaudit.experiments.amplification_sampling import PAIR, subsampled_rr
from dpaudit.mechanisms.builtins.randomized_response import keep_probability

Z = 5.0
REL = 1e-12
SEED = 20120


# amplification-sampling


@pytest.mark.parametrize("q", [0.01, 0.1, 0.5, 1.0])
def test_the_pairs_largest_likelihood_ratio_is_1_plus_q_times_e_minus_1(q):
    eps = 1.0
    keep = 1.0 / (1.0 + math.exp(-eps))
    one_present, one_absent = q * keep + (1 - q) * (1 - keep), 1 - keep
    ratios = (one_present / one_absent, (1 - one_absent) / (1 - one_present))
    assert max(ratios) == pytest.approx(1 + q * math.expm1(eps), rel=REL)
    assert math.log(max(ratios)) == pytest.approx(poisson_subsampled(epsilon=eps, q=q)[0], rel=REL)
    # The mechanism's sampler draws those rates.
    rng, n = np.random.default_rng([SEED, int(q * 100)]), 1_000_000
    mech = subsampled_rr(epsilon=eps, q=q)
    for data, p in ((PAIR[1], one_present), (PAIR[0], one_absent)):
        assert abs(np.mean(mech.sample(data, n, rng)) - p) <= Z * math.sqrt(p * (1 - p) / n)


def test_smith_2q_epsilon_is_above_the_tight_bound_for_epsilon_at_most_1():
    for eps, q in itertools.product([0.1, 0.5, 1.0], [0.001, 0.01, 0.1, 0.5, 1.0]):
        assert smith_subsampled(epsilon=eps, q=q) >= poisson_subsampled(epsilon=eps, q=q)[0]


# amplification-shuffling: three forms of the Feldman–McMillan–Talwar bound


def _eq1_of_the_post(eps0: float, n: int, delta: float) -> float:
    """Canonne's post, eq. (1), typed as printed: log(1 + 16 (e^εL − 1)/(e^εL + 1) √(e^εL log(4/δ)/n))."""
    return math.log(1 + 16 * (math.exp(eps0) - 1) / (math.exp(eps0) + 1) * math.sqrt(math.exp(eps0) * math.log(4 / delta) / n))


def _thm31_of_the_paper(eps0: float, n: int, delta: float) -> float:
    """arXiv 2012.12803, Thm 3.1 (REFERENCES.md §3): log(1 + (e^ε0 − 1)/(e^ε0 + 1) (8√(e^ε0 log(4/δ))/√n + 8e^ε0/n))."""
    a = 8 * math.sqrt(math.exp(eps0) * math.log(4 / delta)) / math.sqrt(n) + 8 * math.exp(eps0) / n
    return math.log(1 + (math.exp(eps0) - 1) / (math.exp(eps0) + 1) * a)


def _closed_form_of_the_code(eps0: float, n: int, delta: float) -> float:
    """The authors' code (apple/ml-shuffling-amplification, closedformanalysis), restated:
    a = 8√(e^ε0 log(4/δ))/√n + 8e^ε0/n, log(1 + (1 − e^−ε0)/(1 + e^{−ε0 − log(1 + a)}) · a)."""
    a = 8 * math.sqrt(math.exp(eps0) * math.log(4 / delta)) / math.sqrt(n) + 8 * math.exp(eps0) / n
    return math.log(1 + (1 - math.exp(-eps0)) / (1 + math.exp(-eps0 - math.log(1 + a))) * a)


GRID = list(itertools.product([0.05, 0.5, 1.0, 2.0, 4.0], [10**3, 10**4, 10**5, 10**7], [1e-3, 1e-6, 1e-10]))


@pytest.mark.parametrize(("eps0", "n", "delta"), GRID)
def test_each_form_is_its_source_formula(eps0, n, delta):
    assert shuffling.post_epsilon(epsilon0=eps0, num_users=n, delta=delta) == pytest.approx(
        _eq1_of_the_post(eps0, n, delta), rel=REL)
    assert shuffling.paper_epsilon(epsilon0=eps0, num_users=n, delta=delta) == pytest.approx(
        _thm31_of_the_paper(eps0, n, delta), rel=REL)
    if shuffling_condition(epsilon0=eps0, num_users=n, delta=delta):
        assert shuffled_epsilon(epsilon0=eps0, num_users=n, delta=delta) == pytest.approx(
            min(eps0, _closed_form_of_the_code(eps0, n, delta)), rel=REL)


@pytest.mark.parametrize(("eps0", "n", "delta"), GRID)
def test_paper_below_code_below_post_where_the_closed_form_applies(eps0, n, delta):
    # The docstring's relation (the code caps at ε0, so the paper's form is compared capped too).
    if not shuffling_condition(epsilon0=eps0, num_users=n, delta=delta):
        pytest.skip("outside the closed form's condition")
    code = shuffled_epsilon(epsilon0=eps0, num_users=n, delta=delta)
    assert min(eps0, shuffling.paper_epsilon(epsilon0=eps0, num_users=n, delta=delta)) <= code
    assert code <= shuffling.post_epsilon(epsilon0=eps0, num_users=n, delta=delta)


def test_the_relation_is_not_vacuous_on_the_grid():
    assert sum(shuffling_condition(epsilon0=e, num_users=n, delta=d) for e, n, d in GRID) >= 30


def test_the_posts_small_epsilon_form_follows_from_its_eq_1():
    # The post: for εL ≪ 1, ε ≈ εL · 8√(log(4/δ)/n).
    eps0, n, delta = 1e-4, 10**6, 1e-6
    assert shuffling.post_epsilon(epsilon0=eps0, num_users=n, delta=delta) == pytest.approx(
        eps0 * 8 * math.sqrt(math.log(4 / delta) / n), rel=1e-3)


def test_docstring_percentages_at_the_figures_settings():
    # "8–15% above the paper's and 27–41% below the post's" at ε0 = 1, δ = 1e-4, n = 500 … 10,000.
    above, below = [], []
    for n in shuffling.NS_FULL:
        kwargs = {"epsilon0": shuffling.EPSILON0, "num_users": n, "delta": shuffling.DELTA}
        code = shuffled_epsilon(**kwargs)
        above.append(100 * (code / shuffling.paper_epsilon(**kwargs) - 1))
        below.append(100 * (1 - code / shuffling.post_epsilon(**kwargs)))
    assert (round(min(above)), round(max(above))) == (8, 15)
    assert (round(min(below)), round(max(below))) == (27, 41)


def test_pair_distributions_hold_all_the_mass_and_the_samplers_mean():
    # P0 and P1 on the grid sum to 1 (the docstring: mass outside below 1e-30), and the mean of c0 under
    # D0 is (n − 1)·q + p (the others' reports of 0, then the target's), as the sampler's histograms say.
    n = 500
    p0, p1, width = shuffling.pair_distributions(shuffling.EPSILON0, n)
    assert p0.sum() == pytest.approx(1.0, abs=1e-12) and p1.sum() == pytest.approx(1.0, abs=1e-12)
    p = keep_probability(shuffling.EPSILON0, shuffling.K)
    q = (1 - p) / (shuffling.K - 1)
    c0 = np.arange(width + 1)[:, None]
    assert float((c0 * p0).sum()) == pytest.approx((n - 1) * q + p, rel=REL)
    assert float((c0 * p1).sum()) == pytest.approx((n - 1) * q + q, rel=REL)
    mech = shuffling.shuffled_rr(epsilon0=shuffling.EPSILON0, num_users=n)
    draws = 100_000
    hist = mech.sample(mech.default_pair[0], draws, np.random.default_rng(SEED))[:, 0]
    assert abs(hist.mean() - ((n - 1) * q + p)) <= Z * hist.std(ddof=1) / math.sqrt(draws)
