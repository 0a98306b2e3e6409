"""One-run estimator (Steinke, Nasr, Jagielski): p-value, inversion, guesses."""

import numpy as np
import pytest
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.one_run.binomial import one_run_epsilon, one_run_lower_bound, one_run_p_value, rule_epsilon
from dpaudit.audit.estimators.one_run.coupling import coupling_epsilon
from dpaudit.audit.estimators.one_run.rules import Guesses
from dpaudit.audit.theory.profiles import gdp_epsilon
from dpaudit.errors import DPAuditError
from scipy.special import expit
from scipy.stats import binom, norm

# Fixed before any score was computed, the same for every μ: a geometric ladder of
# symmetric rules (guess IN for the k highest, OUT for the k lowest), paid for by
# Bonferroni over its 4 entries.
GUESS_LADDER = [(k, k) for k in (50, 150, 500, 1500)]


def _naive_p_value(m, r, v, eps, delta):
    """The theorem's bound written term by term from the binomial pmf."""
    q = expit(eps)
    tail = binom.sf(v - 1, r, q)
    worst = 0.0
    for i in range(1, v + 1):
        worst = max(worst, sum(binom.pmf(j, r, q) for j in range(v - i, v)) / i)
    return min(1.0, tail + 2 * m * delta * worst)


@pytest.mark.parametrize("m, r, v", [(100, 10, 7), (1000, 60, 55), (50, 50, 30), (20, 5, 0)])
@pytest.mark.parametrize("eps", [0.0, 0.7, 2.0])
@pytest.mark.parametrize("delta", [0.0, 1e-5, 1e-2])
def test_p_value_matches_term_by_term_formula(m, r, v, eps, delta):
    got = one_run_p_value(canaries=m, guesses=r, correct=v, epsilon=eps, delta=delta)
    assert got == pytest.approx(_naive_p_value(m, r, v, eps, delta), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("m, r", [(100, 10), (1000, 100), (20_000, 300)])
@pytest.mark.parametrize("delta", [0.0, 1e-6, 1e-3])
def test_p_value_is_monotone_so_the_inversion_is_unique(m, r, delta):
    """Rising in ε where it is below 1/2 and falling in v: `largest_rejected` relies on it."""
    for v in np.unique(np.linspace(1, r, 9).astype(int)):
        p = np.array([one_run_p_value(canaries=m, guesses=r, correct=int(v), epsilon=e,
                                      delta=delta) for e in np.linspace(0.0, 10.0, 61)])
        below = p[:-1] < 0.5
        assert np.all(np.diff(p)[below] >= -1e-12)
    for eps in (0.0, 1.0, 3.0):
        p = [one_run_p_value(canaries=m, guesses=r, correct=v, epsilon=eps, delta=delta)
             for v in range(r + 1)]
        assert np.all(np.diff(p) <= 1e-12)


def test_epsilon_is_the_boundary_of_rejection():
    kw = dict(canaries=1000, guesses=100, correct=90, delta=1e-5)
    eps = one_run_epsilon(beta=0.05, **kw)
    assert eps > 0
    assert one_run_p_value(epsilon=eps, **kw) <= 0.05 < one_run_p_value(epsilon=eps + 1e-4, **kw)
    assert one_run_epsilon(canaries=1000, guesses=100, correct=50, delta=1e-5, beta=0.05) == 0.0


@pytest.mark.parametrize("mu, published", [(1.0, 1.13), (2.0, 2.31), (4.0, 4.40)])
def test_gaussian_scores_reach_published_bounds_and_stay_below_truth(mu, published):
    """IN ~ N(μ, 1), OUT ~ N(0, 1), 10⁴ each as deterministic grids, δ = 1e-6, 95%."""
    n, delta = 10_000, 1e-6
    out = norm.ppf((np.arange(n) + 0.5) / n)
    lb = one_run_lower_bound(Observations.from_in_out(out + mu, out), delta=delta,
                             guess_counts=GUESS_LADDER, calibration="bonferroni", rng=0)
    assert published <= lb.epsilon <= gdp_epsilon(delta=delta, mu=mu)
    assert lb.method == "one-run" and lb.assumption is None
    assert lb.details["canaries"] == 2 * n
    assert lb.details["beta_per_candidate"] == pytest.approx([0.05 / len(GUESS_LADDER)] * len(GUESS_LADDER))
    assert lb.details["correct"] <= lb.details["guesses"]


@pytest.mark.parametrize("confidence", [0.95, 0.7])
@pytest.mark.parametrize("guess_counts", [[(20, 20)], [(10, 0), (30, 30)]])
def test_null_scores_certify_zero_except_at_rate_beta(guess_counts, confidence):
    """Scores independent of the truth: a positive ε is an error, at rate ≤ β over seeds."""
    seeds, m, beta = 200, 200, 1 - confidence
    positive = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        obs = Observations(scores=rng.normal(size=m), truth=rng.random(m) < 0.5)
        lb = one_run_lower_bound(obs, delta=1e-5, confidence=1 - beta, guess_counts=guess_counts,
                                 rng=rng)
        positive += lb.epsilon > 0.0
    assert positive <= binom.isf(1e-4, seeds, beta)


@pytest.mark.parametrize("guess_counts", [[], [(0, 0)], [(150, 60)], [(-1, 5)], [(1, 2, 3)], 5])
def test_invalid_guess_counts_raise(guess_counts):
    obs = Observations(scores=np.arange(200.0), truth=np.arange(200) % 2 == 0)
    with pytest.raises(DPAuditError):
        one_run_lower_bound(obs, delta=1e-5, guess_counts=guess_counts, rng=0)


@pytest.mark.parametrize("k_plus, k_minus, correct, beta", [(78, 0, 78, 0.01), (1000, 1000, 1900, 0.001),
                                                              (100, 100, 150, 0.05)])
def test_a_rule_gets_the_larger_of_the_two_inversions_and_skips_what_it_cannot_beat(k_plus, k_minus, correct, beta):
    g = Guesses(k_plus=k_plus, k_minus=k_minus, correct=correct, beta=beta)
    kw = dict(canaries=20_000, guesses=g.guesses, correct=correct, delta=1e-5, beta=beta)
    value = rule_epsilon(g, canaries=20_000, delta=1e-5)
    assert value == pytest.approx(max(one_run_epsilon(**kw), coupling_epsilon(sides=g.sides, **kw)), abs=1e-6)
    assert rule_epsilon(g, canaries=20_000, delta=1e-5, floor=value / 2) == pytest.approx(value, abs=1e-6)
    assert rule_epsilon(g, canaries=20_000, delta=1e-5, floor=value + 1e-3) <= value
