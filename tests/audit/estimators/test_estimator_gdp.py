"""Gaussian-DP estimator: μ-GDP privacy profile, μ lower bounds, labels, soundness, tightness."""

import math

import dp_accounting
import numpy as np
import pytest
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.clopper_pearson import epsilon_lower_bound
from dpaudit.audit.estimators.gdp import (
    GDP_ASSUMPTION,
    gdp_from_counts,
    gdp_lower_bound,
    mu_lower_bound,
)
from dpaudit.audit.estimators.thresholds import Bonferroni, Split
from dpaudit.audit.theory.profiles import gdp_epsilon
from dpaudit.errors import DPAuditError
from scipy.stats import binom, laplace, norm


def _grid(n: int) -> np.ndarray:
    return (np.arange(n) + 0.5) / n


@pytest.mark.parametrize("mu", [0.2, 1.0, 3.0])
def test_mu_bound_from_exact_rates_is_sound_and_converges(mu):
    thresholds = np.linspace(-2.0, mu + 2.0, 41)
    fpr, fnr = norm.sf(thresholds), norm.cdf(thresholds - mu)
    bounds = {n: mu_lower_bound(np.floor(fpr * n), n, np.floor(fnr * n), n, beta=0.05).max()
              for n in (10**3, 10**5, 10**7)}
    assert all(b <= mu for b in bounds.values())
    assert bounds[10**3] <= bounds[10**5] <= bounds[10**7]
    assert bounds[10**7] >= 0.97 * mu


def test_gdp_from_counts_reproduces_reference_and_is_labelled():
    # REFERENCES §5: σ = √(2 ln(1.25/δ)) for (1, 1e-5), 10⁶ per dataset: GDP ≈ 0.73 of 0.751.
    n, delta = 10**6, 1e-5
    sigma = math.sqrt(2 * math.log(1.25 / delta))
    t = 0.5  # midway between the two means: the best test for a Gaussian shift
    fp, fn = int(norm.sf(t / sigma) * n), int(norm.cdf((t - 1) / sigma) * n)
    lb = gdp_from_counts(fp, n, fn, n, delta=delta)
    true_eps = dp_accounting.get_epsilon_gaussian(sigma, delta)
    assert 0.95 * true_eps <= lb.epsilon <= true_eps
    cp = float(epsilon_lower_bound(fp, n, fn, n, delta=delta, beta=0.05))
    assert cp < lb.epsilon  # the (ε, δ) bound of the same test is far looser
    assert lb.assumption == GDP_ASSUMPTION and lb.method == "gdp"
    assert lb.details["mu"] <= 1 / sigma and "μ-GDP" in lb.details["mu_statement"]
    assert "assuming the trade-off curve is Gaussian" in lb.meaning()
    assert lb.to_dict()["assumption"] == GDP_ASSUMPTION


@pytest.mark.parametrize("strategy", [Bonferroni(thresholds=tuple(np.linspace(-1.0, 3.0, 9))),
                                      Split(), Bonferroni(count=10)])
@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_gaussian_grid_scores_are_sound_and_tight(strategy, mu):
    n, delta = 100_000, 1e-5
    out = norm.ppf(_grid(n))
    lb = gdp_lower_bound(Observations.from_in_out(out + mu, out), delta=delta, strategy=strategy,
                         rng=3)
    assert lb.details["mu"] <= mu and lb.epsilon <= gdp_epsilon(delta=delta, mu=mu)
    assert lb.details["mu"] >= 0.9 * mu


def test_gdp_epsilon_is_not_assumption_free():
    """On pure ε = 1 Laplace scores the GDP ε exceeds 1: it holds only under its label."""
    out = laplace.ppf(_grid(10_000))
    lb = gdp_lower_bound(Observations.from_in_out(out + 1.0, out), delta=1e-5,
                         strategy=Bonferroni(thresholds=(0.0, 0.5, 1.0)), rng=0)
    assert lb.epsilon > 1.0 and lb.assumption == GDP_ASSUMPTION


@pytest.mark.parametrize("confidence", [0.95, 0.7])
@pytest.mark.parametrize("strategy", [Split(), Bonferroni(thresholds=(-1.0, 0.0, 1.0))])
def test_null_scores_certify_zero_mu_except_at_rate_beta(strategy, confidence):
    """IN and OUT scores from one distribution: a positive μ is an error, at rate ≤ β."""
    seeds, beta = 200, 1 - confidence
    positive = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        obs = Observations.from_in_out(rng.normal(size=100), rng.normal(size=100))
        lb = gdp_lower_bound(obs, delta=1e-5, confidence=1 - beta, strategy=strategy, rng=rng)
        positive += lb.details["mu"] > 0.0
    assert positive <= binom.isf(1e-4, seeds, beta)


def test_invalid_counts_raise():
    with pytest.raises(DPAuditError):
        gdp_from_counts(5, 0, 1, 10, delta=1e-5)
    with pytest.raises(DPAuditError):
        gdp_from_counts(-1, 10, 1, 10, delta=1e-5)
    with pytest.raises(DPAuditError):
        gdp_from_counts(1, 10, 1, 10, delta=1e-5, confidence=0.0)
