"""One-run f-DP estimator for μ-GDP (Mahloujifar, Melis, Chaudhuri): recursion, soundness."""

import numpy as np
import pytest
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.gdp import GDP_ASSUMPTION
from dpaudit.audit.estimators.one_run.binomial import one_run_lower_bound
from dpaudit.audit.estimators.one_run.fdp import gdp_excess, one_run_fdp_lower_bound, one_run_fdp_mu
from dpaudit.audit.theory.profiles import gdp_epsilon
from scipy.stats import binom, norm

# Fixed before any score was computed, the same for every μ (see test_estimator_one_run).
GUESS_LADDER = [(k, k) for k in (50, 150, 500, 1500)]


def _recursion_in_full(m, r, v, tau, mu):
    """The recursion written out over whole arrays, without early exits."""
    h, rr = np.zeros(v + 1), np.zeros(v + 1)
    h[v], rr[v] = tau * (r - v) / m, tau * v / m
    for i in range(v - 1, -1, -1):
        h[i] = max(h[i + 1], norm.cdf(norm.ppf(min(rr[i + 1], 1.0)) - mu))
        rr[i] = rr[i + 1] + i / (r - i) * (h[i] - h[i + 1])
    return rr[0] + h[0] - r / m


@pytest.mark.parametrize("m, r, v", [(20_000, 300, 282), (20_000, 1000, 903), (1000, 50, 40),
                                     (200, 40, 25), (500, 100, 100)])
@pytest.mark.parametrize("mu", [0.0, 0.3, 0.7, 1.5])
def test_early_exits_do_not_change_the_verdict(m, r, v, mu):
    full = _recursion_in_full(m, r, v, 0.05, mu)
    fast = gdp_excess(canaries=m, guesses=r, correct=v, beta=0.05, mu=mu)
    assert (fast > 0) == (full > 0)
    if full < 1.0:
        assert fast == pytest.approx(full, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("m", [50, 200, 1000])
@pytest.mark.parametrize("r", [5, 20, 50])
@pytest.mark.parametrize("tau", [0.01, 0.05, 0.2])
def test_rejecting_mu_zero_needs_an_exact_binomial_tail_below_tau(m, r, tau):
    """At μ = 0 the guesses are fair coin flips: P[W ≥ v] is an exact binomial tail."""
    for v in range(r + 1):
        if gdp_excess(canaries=m, guesses=r, correct=v, beta=tau, mu=0.0) > 0:
            assert binom.sf(v - 1, r, 0.5) <= tau


@pytest.mark.parametrize("m, r", [(200, 20), (1000, 100), (20_000, 500)])
def test_rejection_is_monotone_in_mu_and_in_correct_guesses(m, r):
    for v in np.unique(np.linspace(1, r, 8).astype(int)):
        rejected = [gdp_excess(canaries=m, guesses=r, correct=int(v), beta=0.05, mu=mu) > 0
                    for mu in np.linspace(0.0, 4.0, 81)]
        assert np.all(np.diff(np.array(rejected, int)) <= 0)
    for mu in (0.0, 0.5, 1.5):
        rejected = [gdp_excess(canaries=m, guesses=r, correct=v, beta=0.05, mu=mu) > 0
                    for v in range(r + 1)]
        assert np.all(np.diff(np.array(rejected, int)) >= 0)


def test_mu_is_the_boundary_of_rejection():
    kw = dict(canaries=1000, guesses=100, correct=90, beta=0.05)
    mu = one_run_fdp_mu(**kw)
    assert gdp_excess(mu=mu, **kw) > 0 >= gdp_excess(mu=mu + 1e-5, **kw)


@pytest.mark.parametrize("mu, published", [(1.0, 2.16), (2.0, 4.72), (4.0, 9.13)])
def test_gaussian_scores_reach_published_bounds_and_stay_below_truth(mu, published):
    """IN ~ N(μ, 1), OUT ~ N(0, 1), 10⁴ each as deterministic grids, δ = 1e-6, 95%."""
    n, delta = 10_000, 1e-6
    out = norm.ppf((np.arange(n) + 0.5) / n)
    obs = Observations.from_in_out(out + mu, out)
    lb = one_run_fdp_lower_bound(obs, delta=delta, guess_counts=GUESS_LADDER, rng=0)
    assert published <= lb.epsilon <= gdp_epsilon(delta=delta, mu=mu)
    assert lb.details["mu"] <= mu
    steinke = one_run_lower_bound(obs, delta=delta, guess_counts=GUESS_LADDER, rng=0)
    assert lb.epsilon > steinke.epsilon
    assert lb.method == "one-run-fdp" and lb.assumption == GDP_ASSUMPTION
    assert "without the Gaussian assumption" in lb.details["mu_statement"]


@pytest.mark.parametrize("confidence", [0.95, 0.7])
@pytest.mark.parametrize("guess_counts", [[(20, 20)], [(10, 0), (30, 30)]])
def test_null_scores_certify_zero_except_at_rate_beta(guess_counts, confidence):
    """Scores independent of the truth (0-GDP): a positive μ is an error, at rate ≤ β."""
    seeds, m, beta = 200, 200, 1 - confidence
    positive = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        obs = Observations(scores=rng.normal(size=m), truth=rng.random(m) < 0.5)
        lb = one_run_fdp_lower_bound(obs, delta=1e-5, confidence=1 - beta,
                                     guess_counts=guess_counts, rng=rng)
        positive += lb.details["mu"] > 0.0
    assert positive <= binom.isf(1e-4, seeds, beta)


def test_gaussian_game_never_certifies_more_than_the_true_mu():
    """One-run game on a μ₀-GDP mechanism (IN ~ N(μ₀, 1), OUT ~ N(0, 1)): μ_lower > μ₀ w.p. ≤ β."""
    seeds, m, mu0, beta = 200, 500, 0.2, 0.3
    above = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        truth = rng.random(m) < 0.5
        obs = Observations(scores=rng.normal(size=m) + mu0 * truth, truth=truth)
        lb = one_run_fdp_lower_bound(obs, delta=1e-5, confidence=1 - beta,
                                     guess_counts=[(25, 25)], rng=rng)
        above += lb.details["mu"] > mu0
    assert above <= binom.isf(1e-4, seeds, beta)
