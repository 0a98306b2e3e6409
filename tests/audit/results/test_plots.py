"""The privacy-region plot and the trade-off curves it draws."""

from __future__ import annotations

import dataclasses
import io
import math

import numpy as np
import pytest
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.estimators.clopper_pearson import epsilon_from_rates
from dpaudit.audit.results.plots import plot_privacy_region, region_bounds, result_box
from dpaudit.audit.results.result import VIOLATION
from dpaudit.audit.results.tradeoffs import event_tradeoff, kov_tradeoff, laplace_tradeoff, randomized_response_tradeoff
from dpaudit.audit.theory.profiles import epsilon_delta_tradeoff, gdp_tradeoff
from dpaudit.mechanisms.registry import get_mechanism
from matplotlib.image import imread
from matplotlib.patches import Rectangle
from scipy import stats

TRIALS = 40_000


@pytest.fixture(scope="module")
def audits():
    """One consistent audit (the Gaussian mechanism, whose bound has slack) and one violation (histogram with the wrong sensitivity)."""
    out = {}
    for name, params in (("gaussian", {"epsilon": 1.0}), ("histogram_wrong_sensitivity", {})):
        mech = get_mechanism(name, **params)
        out[name] = (mech, audit_mechanism(mech, trials=TRIALS, seed=3))
    return out


def _outside_claimed_region(result) -> bool:
    box = result_box(result)
    fpr, fnr = box.corner
    lower, _ = region_bounds(result.claim.epsilon, result.claim.delta, np.array([fpr]))
    return bool(fnr < lower[0] - 1e-12)


@pytest.mark.parametrize("name", ["gaussian", "histogram_wrong_sensitivity"])
def test_corner_outside_region_exactly_on_violation(audits, name):
    _, result = audits[name]
    assert _outside_claimed_region(result) == (result.verdict == VIOLATION)


def test_audits_cover_both_verdicts(audits):
    verdicts = {result.verdict for _, result in audits.values()}
    assert verdicts == {"consistent", "violation"}


@pytest.mark.parametrize("name", ["gaussian", "histogram_wrong_sensitivity"])
def test_box_corner_reproduces_certified_bound(audits, name):
    _, result = audits[name]
    box = result_box(result)
    assert box.fpr_low <= box.fpr <= box.fpr_high and box.fnr_low <= box.fnr <= box.fnr_high
    eps = float(epsilon_from_rates(box.corner[0], box.corner[1], result.lower_bound.delta))
    assert eps == pytest.approx(result.lower_bound.epsilon, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", ["gaussian", "histogram_wrong_sensitivity"])
def test_plot_writes_png_with_box_at_observed_rates(audits, tmp_path, name):
    mech, result = audits[name]
    path = tmp_path / "region.png"
    figure = plot_privacy_region(result, path, event=mech.event)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width = imread(path).shape[:2]
    assert width > 600 and height > 300
    box = result_box(result)
    full = figure.axes[0]
    rectangles = [p for p in full.patches if isinstance(p, Rectangle)]
    assert any(
        math.isclose(r.get_x(), box.fpr_low) and math.isclose(r.get_y(), box.fnr_low)
        and math.isclose(r.get_x() + r.get_width(), box.fpr_high) for r in rectangles
    )
    labels = [line.get_label() for line in full.get_lines()]
    assert any("trade-off" in label for label in labels)
    assert any("certified lower bound" in label for label in labels) == (result.lower_bound.epsilon > 0)


def test_plot_into_given_axes_draws_one_panel(audits):
    from matplotlib.figure import Figure

    _, result = audits["gaussian"]
    ax = Figure().subplots()
    figure = plot_privacy_region(result, ax=ax)
    assert figure is ax.figure and len(figure.axes) == 1
    assert ax.get_xlim() == (0.0, 1.0)


def test_a_mechanism_name_with_dollar_signs_is_drawn_as_written_not_as_mathtext(audits):
    _, result = audits["gaussian"]
    named = dataclasses.replace(result, mechanism="price $\\frac{$ in")
    figure = plot_privacy_region(named)
    figure.savefig(io.BytesIO(), format="png")
    assert figure.axes[0].get_title().startswith("price $\\frac{$ in: ")


def test_laplace_tradeoff_matches_threshold_tests():
    eps = 1.3
    t = np.linspace(-3.0, 4.0, 50)
    alpha = stats.laplace.sf(t, scale=1 / eps)
    beta = stats.laplace.cdf(t, loc=1.0, scale=1 / eps)
    assert np.allclose(laplace_tradeoff(alpha, epsilon0=eps), beta, atol=1e-12)


def test_randomized_response_tradeoff_vertices_and_binary_case():
    eps, k = 1.0, 4
    q = 1 / (math.exp(eps) + k - 1)
    p = math.exp(eps) * q
    curve = randomized_response_tradeoff(np.array([0.0, q, 1 - p, 1.0]), epsilon0=eps, num_buckets=k)
    assert np.allclose(curve, [1.0, 1 - p, q, 0.0])
    alpha = np.linspace(0, 1, 101)
    assert np.allclose(randomized_response_tradeoff(alpha, epsilon0=eps), epsilon_delta_tradeoff(alpha, epsilon=eps))


def test_kov_tradeoff_single_fold_is_the_region_and_shrinks_with_k():
    alpha = np.linspace(0, 1, 201)
    assert np.allclose(kov_tradeoff(alpha, epsilon=0.4, delta=0.1, k=1), epsilon_delta_tradeoff(alpha, epsilon=0.4, delta=0.1))
    curves = [kov_tradeoff(alpha, epsilon=0.4, k=k) for k in range(1, 6)]
    assert all(np.all(b <= a + 1e-12) for a, b in zip(curves, curves[1:]))
    basic = epsilon_delta_tradeoff(alpha, epsilon=2.0)
    assert np.all(curves[-1] >= basic - 1e-12)


def test_event_tradeoff_of_gaussian_is_gdp():
    mech = get_mechanism("gaussian", epsilon=1.0, delta=1e-5)
    curve, label = event_tradeoff(mech.event, relation="add-remove")
    alpha = np.linspace(0, 1, 51)
    assert np.allclose(curve(alpha), gdp_tradeoff(alpha, mu=1.0 / mech.params["sigma"]))
    assert "Gaussian" in label
    assert event_tradeoff(get_mechanism("report_noisy_max").event) is None
