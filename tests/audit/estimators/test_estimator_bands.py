"""Simultaneous bands: the exact coverage computation, the band's validity for every threshold, the table."""

import json

import numpy as np
import pytest
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators import bands
from dpaudit.audit.estimators.clopper_pearson import epsilon_from_rates, rate_upper_bound
from dpaudit.audit.estimators.gdp import gdp_lower_bound, mu_lower_bound
from dpaudit.audit.estimators.thresholds import SimultaneousBands, error_counts, threshold_lower_bound
from scipy.stats import binom, laplace, norm


def _grid(n: int) -> np.ndarray:
    return (np.arange(n) + 0.5) / n


def test_coverage_of_one_and_two_order_statistics_is_exact():
    assert bands.band_coverage(1, np.array([1]), np.array([0.3])) == pytest.approx(0.3, rel=1e-12)
    c1, c2 = 0.2, 0.7  # P(U_(1) ≤ c1, U_(2) ≤ c2) = c2² − (c2 − c1)²
    value = bands.band_coverage(2, np.array([1, 2]), np.array([c1, c2]))
    assert value == pytest.approx(c2**2 - (c2 - c1) ** 2, rel=1e-12)


@pytest.mark.parametrize("n", [12, 150])
def test_coverage_matches_a_simulation_of_uniform_order_statistics(n):
    ranks = bands.checkpoints(n)
    values = bands.band_values(n, ranks, 0.01)
    exact = bands.band_coverage(n, ranks, values)
    rng = np.random.default_rng(n)
    reps = 20_000
    u = np.sort(rng.random((reps, n)), axis=1)[:, ranks - 1]
    hits = int(np.sum(np.all(u <= values, axis=1)))
    low, high = binom.ppf([1e-5, 1 - 1e-5], reps, exact)
    assert low <= hits <= high


@pytest.mark.parametrize("n", [1, 2, 9, 100, 2_345])
def test_band_is_monotone_ends_at_one_and_is_wider_than_pointwise(n):
    upper = bands.rate_band(n, 0.025)
    assert upper.shape == (n + 1,) and upper[-1] == 1.0
    assert np.all(np.diff(upper) >= 0.0)
    assert np.all(upper[:-1] >= rate_upper_bound(np.arange(n), n, 0.025) - 1e-12)
    assert bands.band_coverage(n, bands.checkpoints(n), bands.band_values(
        n, bands.checkpoints(n), bands.calibrated_level(n, 0.025))) >= 0.975


def _misses(sample: np.ndarray, survival, upper: np.ndarray, support: np.ndarray) -> bool:
    """Whether some threshold t of `support` has P(X ≥ t) above the band at its count."""
    fp = sample.size - np.searchsorted(np.sort(sample), support, side="left")
    return bool(np.any(survival(support) > upper[fp] + 1e-12))


@pytest.mark.parametrize("law", ["continuous", "ties"])
def test_band_holds_for_every_threshold_at_rate_at_least_one_minus_beta(law):
    n, beta, seeds = 40, 0.1, 2000
    upper = bands.rate_band(n, beta)
    misses = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        if law == "continuous":
            x = rng.random(n)
            support = np.concatenate([np.sort(x), np.sort(x) + 1e-12])
            misses += _misses(x, lambda t: np.clip(1.0 - t, 0.0, 1.0), upper, support)
        else:
            x = rng.binomial(4, 0.5, n).astype(float)
            misses += _misses(x, lambda t: binom.sf(np.ceil(t) - 1, 4, 0.5), upper, np.arange(6.0))
    assert misses <= binom.isf(1e-4, seeds, beta)


def test_shipped_table_matches_the_design_and_its_levels_verify():
    data = json.loads(bands.LEVELS_FILE.read_text())
    assert data["design"] == bands.design_fingerprint()
    for beta, rows in data["levels"].items():
        n, alpha = rows[3]
        gap = bands.band_coverage(n, bands.checkpoints(n),
                                  bands.band_values(n, bands.checkpoints(n), alpha))
        assert gap >= 1.0 - float(beta)


def _laplace_obs(n: int) -> Observations:
    out = laplace.ppf(_grid(n))
    return Observations.from_in_out(out + 1.0, out)


@pytest.mark.parametrize("n", [1_000, 100_000])
def test_bands_on_tight_laplace_scores_are_sound_and_reach_the_band_at_the_exact_rates(n):
    """Grid scores: every threshold's counts are n·rate up to one, so the band at n·rate + 1 is reached."""
    lb = threshold_lower_bound(_laplace_obs(n), delta=0.0, strategy=SimultaneousBands(), rng=0)
    thresholds = np.linspace(-3.0, 6.0, 4001)
    fp = np.minimum(np.ceil(laplace.sf(thresholds) * n).astype(int) + 1, n)
    fn = np.minimum(np.ceil(laplace.cdf(thresholds - 1.0) * n).astype(int) + 1, n)
    upper = bands.rate_band(n, 0.025)
    reachable = epsilon_from_rates(upper[fp], upper[fn]).max()
    assert reachable <= lb.epsilon <= 1.0
    assert lb.method == "simultaneous-band" and lb.details["strategy"] == "simultaneous-bands"
    fp, n0, fn, n1 = error_counts(_laplace_obs(n), [lb.details["threshold"]])
    assert (int(fp[0]), int(fn[0])) == (lb.details["fp"], lb.details["fn"])


def test_gdp_with_bands_is_sound_on_gaussian_grid_scores():
    n, mu = 20_000, 1.0
    out = norm.ppf(_grid(n))
    lb = gdp_lower_bound(Observations.from_in_out(out + mu, out), delta=1e-5, rng=0)
    thresholds = np.linspace(-3.0, 4.0, 2001)
    oracle = mu_lower_bound(norm.sf(thresholds) * n, n, norm.cdf(thresholds - mu) * n, n, beta=0.05).max()
    assert lb.details["mu"] <= mu
    assert lb.details["mu"] >= 0.9 * oracle


def test_a_tabulated_size_costs_one_exact_evaluation(monkeypatch):
    calls = []
    exact = bands.band_coverage

    def counting(*args):
        calls.append(1)
        return exact(*args)

    monkeypatch.setattr(bands, "band_coverage", counting)
    level = bands.calibrated_level.__wrapped__(54_321, 0.025)
    assert len(calls) == 1 and 0.0 < level < 0.025


@pytest.mark.parametrize("n, beta", [(0, 0.05), (10, 0.0), (10, 1.0), (2.5, 0.05)])
def test_rate_band_refuses_bad_input_with_a_sentence(n, beta):
    from dpaudit.errors import DPAuditError

    with pytest.raises(DPAuditError):
        bands.rate_band(n, beta)
