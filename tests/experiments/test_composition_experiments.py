"""`composition-laplace`, `composition-region` and their grid Laplace noise: the formulas of their docstrings.

Sampling tests allow Z standard errors of the sample size (fixed seeds; a
correct formula fails with probability below 6·10⁻⁷ per check). Two
evaluations of one formula in different arithmetic agree to REL (rounding).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dpaudit.audit.results.tradeoffs import kov_tradeoff
from dpaudit.audit.theory.composition import kov_epsilon
from dpaudit.experiments import composition_region as region
from dpaudit.experiments.composition_laplace import EPSILON0, PAIR, kfold_laplace
from dpaudit.experiments.grid_laplace import GRID_STEP, grid_laplace
from figure_data import FIGURES, load
from scipy.stats import binom, laplace

Z = 5.0
REL = 1e-12
SEED = 20150


# grid_laplace


def _log_cell_probability(cells: np.ndarray, eps: float) -> np.ndarray:
    """Return log P[Laplace(1/ε) in [(j − ½)h, (j + ½)h)] for integers j, without cancellation."""
    a, b = (np.abs(cells) - 0.5) * GRID_STEP, (np.abs(cells) + 0.5) * GRID_STEP  # the cell folded to x ≥ 0
    outer = np.log(0.5) - eps * a + np.log(-np.expm1(-eps * GRID_STEP))  # ½(e^{−εa} − e^{−εb}), a ≥ 0
    centre = np.log(-np.expm1(-eps * b))  # the cell around 0: 2 · ½(1 − e^{−εb})
    return np.where(cells == 0, centre, outer)


def test_grid_cells_change_by_at_most_e_to_the_epsilon_shift():
    # Cell j is [(j − ½)h, (j + ½)h); shifting the data by an integer m moves the noise by m/h cells. The
    # cell probabilities change by at most e^{ε|m|}, and by exactly that away from 0.
    eps = 0.25
    for m in (1, 3):
        cells = np.arange(-3 * 2**20, 3 * 2**20, 997)
        log_ratio = np.abs(_log_cell_probability(cells, eps) - _log_cell_probability(cells - m * 2**20, eps))
        assert log_ratio.max() <= eps * m * (1 + REL)
        assert log_ratio.max() == pytest.approx(eps * m, rel=REL)


def test_the_sampler_draws_those_cells():
    # The cells −2^20 … 2^20 cover [−1 − h/2, 1 + h/2): probability 1 − e^{−ε(1 + h/2)}, and their sum of
    # `_log_cell_probability` is that value.
    eps, n = 0.25, 1_000_000
    cells = np.round(grid_laplace(1 / eps, n, np.random.default_rng(SEED)) / GRID_STEP)
    p = -math.expm1(-eps * (1 + GRID_STEP / 2))
    assert float(np.exp(_log_cell_probability(np.arange(-(2**20), 2**20 + 1), eps)).sum()) == pytest.approx(p, rel=1e-9)
    assert abs(np.mean(np.abs(cells) <= 2**20) - p) <= Z * math.sqrt(p * (1 - p) / n)


def test_grid_noise_is_on_the_grid_and_adds_exactly_to_integers():
    noise = grid_laplace(4.0, 100_000, np.random.default_rng(SEED))
    assert np.all(noise / GRID_STEP == np.round(noise / GRID_STEP))
    for x in (1.0, 16.0, 1000.0):
        assert np.all((x + noise) - x == noise)


# composition-laplace


def test_privacy_loss_is_epsilon0_times_sum_of_2_clip_minus_1():
    # log p_{D1}(x)/p_{D0}(x) for k Laplace(1/ε0) releases centred at 1 and at 0.
    x = np.random.default_rng(SEED).uniform(-3, 4, (1000, 4))
    scale = 1 / EPSILON0
    direct = (laplace.logpdf(x, loc=1, scale=scale) - laplace.logpdf(x, loc=0, scale=scale)).sum(axis=1)
    assert direct == pytest.approx(EPSILON0 * (2 * np.clip(x, 0, 1) - 1).sum(axis=1), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_worst_case_event_probabilities(k):
    # The loss reaches kε0 exactly when every release is ≥ 1: (e^−ε0/2)^k under D0, (1/2)^k under D1.
    rng, n = np.random.default_rng([SEED, k]), 1_000_000
    mech = kfold_laplace(epsilon0=EPSILON0, k=k)
    for data, p in ((PAIR[0], (math.exp(-EPSILON0) / 2) ** k), (PAIR[1], 0.5**k)):
        freq = np.mean(np.all(mech.sample(data, n, rng) >= 1.0, axis=1))
        assert abs(freq - p) <= Z * math.sqrt(p * (1 - p) / n)


# composition-region


def _rr_with_atom_rates(k: int, eps: float, delta: float, cut: float) -> tuple[float, float]:
    """Return the exact (FPR, FNR) of {score ≥ cut} for k-fold RR with a δ atom (`_rr_score`)."""
    keep = 1 / (1 + math.exp(-eps))
    if cut == -region.REVEAL / 2:  # no report reveals 0
        return (1 - delta) ** k, 0.0
    if cut == region.REVEAL / 2:  # some report reveals 1
        return 0.0, (1 - delta) ** k
    # no reveal, and at least `cut` reports of 1: binomial over the k unrevealed reports
    fpr = (1 - delta) ** k * binom.sf(cut - 1, k, 1 - keep)
    fnr = (1 - delta) ** k * binom.cdf(cut - 1, k, keep)
    return float(fpr), float(fnr)


@pytest.mark.parametrize("delta", [0.0, 0.1])
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_threshold_tests_are_vertices_of_the_optimal_region(k, delta):
    # KOV Thm 3.3: k-fold RR with a δ atom attains the region; its tests land on the boundary.
    for cut in region.thresholds(k, delta):
        fpr, fnr = _rr_with_atom_rates(k, region.EPSILON, delta, cut)
        assert kov_tradeoff(np.array([fpr]), epsilon=region.EPSILON, delta=delta, k=k)[0] == pytest.approx(fnr, abs=1e-12)


def test_geometric_noise_has_the_loss_of_randomized_response():
    # P[Z ≥ 1] = 1/(1 + e^ε) for P(z) ∝ e^{−ε|z|}: a release ≥ 1 is a report of 1 flipped from 0.
    eps, n = region.EPSILON, 1_000_000
    geo = region.kfold_geometric(epsilon=eps, k=1)
    rng = np.random.default_rng(SEED)
    for data, p in ((region.PAIR[0], 1 / (1 + math.exp(eps))), (region.PAIR[1], 1 / (1 + math.exp(-eps)))):
        freq = np.mean(geo.sample(data, n, rng) >= 1)
        assert abs(freq - p) <= Z * math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("delta", [0.0, 0.1])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_least_delta_with_finite_epsilon_gives_k_epsilon(k, delta):
    # 1 − (1 − δ)^k is the least total δ with finite ε, and there ε = kε (KOV Thm 3.3, i = 0); kov_epsilon
    # rounds up, so it is read just above that δ (a relative 1e-12) and just below (1e-9).
    total = 1.0 - (1.0 - delta) ** k
    assert kov_epsilon(epsilon=region.EPSILON, delta=delta, k=k, target_delta=total * (1 + 1e-12) + 1e-300) == pytest.approx(
        k * region.EPSILON, rel=1e-9)
    if delta > 0:
        assert kov_epsilon(epsilon=region.EPSILON, delta=delta, k=k, target_delta=total * (1 - 1e-9)) == math.inf


def test_composition_laplace_docstring_counts():
    # N(e^−ε0/2)^k at N = 10⁶ (the committed trials): 22,992 at k = 4, 529 at k = 8, 0.28 at k = 16.
    data = load(FIGURES / "composition-laplace.json")
    counts = {r["k"]: r["worst_case_probability_d0"] * data["trials"] for r in data["rows"]}
    assert (round(counts[4]), round(counts[8]), round(counts[16], 2)) == (22992, 529, 0.28)
