"""Canary target mechanisms: claims match theory, clipping and noise behave, neighbours are checked."""

import numpy as np
import pytest
from dpaudit.audit.theory.upper_bound import upper_bound
from dpaudit.mechanisms import InvalidParameterError, check_pair, get_mechanism
from dpaudit.mechanisms.builtins.canary_targets import clip_rows
from dpaudit.mechanisms.registry import registration

CORRECT = ["canary_gaussian_sum", "canary_laplace_sum", "canary_histogram", "canary_mean"]
BUGGY = ["canary_laplace_sum_l2_clip", "canary_mean_noise_divided_twice"]


@pytest.mark.parametrize("name", CORRECT)
def test_correct_mechanisms_claim_what_theory_gives(name):
    mech = get_mechanism(name, epsilon=2.0)
    bound = upper_bound(mech.event, delta=mech.claim.delta, relation=mech.claim.relation.value)
    assert registration(name).expected == "consistent"
    assert bound.epsilon == pytest.approx(2.0, rel=1e-6)


@pytest.mark.parametrize("name", BUGGY)
def test_buggy_mechanisms_are_marked(name):
    mech = get_mechanism(name)
    assert registration(name).expected == "violation"
    check_pair(mech, *mech.default_pair)


@pytest.mark.parametrize("order", [1, 2])
def test_clip_rows_bounds_the_norm_and_keeps_small_rows(order):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 7)) * rng.uniform(0.01, 3.0, size=(50, 1))
    clipped = clip_rows(x, 1.0, order)
    norms = np.linalg.norm(x, ord=order, axis=1)
    assert np.all(np.linalg.norm(clipped, ord=order, axis=1) <= 1.0 + 1e-12)
    np.testing.assert_allclose(clipped[norms <= 1.0], x[norms <= 1.0])


def test_gaussian_sum_noise_has_the_calibrated_scale_and_empty_data_works():
    rng = np.random.default_rng(1)
    mech = get_mechanism("canary_gaussian_sum", epsilon=1.0)
    data = np.array([[3.0, 4.0, 0.0]])  # norm 5, clipped to (0.6, 0.8, 0)
    out = mech.sample(data, 20_000, rng)
    sigma = mech.params["sigma"]
    np.testing.assert_allclose(out.mean(axis=0), [0.6, 0.8, 0.0], atol=5 * sigma / np.sqrt(20_000))
    assert out.std() == pytest.approx(sigma, rel=0.03)
    assert mech.sample(np.zeros((0, 3)), 4, rng).shape == (4, 3)


def test_histogram_ignores_absent_records():
    rng = np.random.default_rng(2)
    mech = get_mechanism("canary_histogram", epsilon=50.0, bins=4)
    out = mech.sample(np.array([0, 0, 3, -1, -1]), 2000, rng)
    np.testing.assert_allclose(out.mean(axis=0), [2, 0, 0, 1], atol=0.01)


def test_mean_noise_shrinks_with_n_and_the_bug_shrinks_it_twice():
    rng = np.random.default_rng(3)
    data = np.zeros((40, 5))
    good = get_mechanism("canary_mean").sample(data, 4000, rng).std()
    bad = get_mechanism("canary_mean_noise_divided_twice").sample(data, 4000, rng).std()
    assert bad == pytest.approx(good / 40, rel=0.1)


def test_neighbour_checks_refuse_two_changes_and_non_null_add_remove():
    mech = get_mechanism("canary_gaussian_sum")
    d0, d1 = mech.default_pair
    d2 = d1.copy()
    d2[1] = 1.0
    with pytest.raises(InvalidParameterError, match="differ in 2"):
        check_pair(mech, d0, d2)
    with pytest.raises(InvalidParameterError, match="null record"):
        check_pair(mech, d1, -d1)
    hist = get_mechanism("canary_histogram")
    with pytest.raises(InvalidParameterError, match="absent"):
        check_pair(hist, np.array([0, 1]), np.array([0, 2]))
