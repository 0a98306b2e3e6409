"""Canary games: inclusion is a fair coin, scores shift for members, datasets hold the right records."""

import numpy as np
import pytest
from dpaudit.attacks.canary import category_canaries, membership_game, pair_canary, sparse_canaries, vector_canaries
from dpaudit.attacks.canary_scores import InnerProduct, OutputStatistic, scorer_by_name
from dpaudit.attacks.one_run_game import one_run_game
from dpaudit.mechanisms import InvalidParameterError, get_mechanism
from scipy.stats import binom


def test_vector_canaries_have_the_norm_and_are_nearly_orthogonal():
    rng = np.random.default_rng(0)
    canaries = vector_canaries(50, dim=4000, norm=2.0, rng=rng)
    gram = canaries.records @ canaries.records.T
    np.testing.assert_allclose(np.diag(gram), 4.0)
    # Off-diagonal ⟨c_i, c_j⟩ has sd norm²/√dim = 0.063; 6 sd bounds all 1225 pairs.
    assert np.abs(gram[~np.eye(50, dtype=bool)]).max() < 6 * 4.0 / np.sqrt(4000)


def test_sparse_canaries_are_orthogonal():
    canaries = sparse_canaries(30, dim=10, rng=np.random.default_rng(1))
    gram = canaries.records @ canaries.records.T
    np.testing.assert_allclose(gram, np.eye(30))


def test_dataset_holds_included_canaries_or_their_absent_records():
    rng = np.random.default_rng(2)
    add = vector_canaries(4, dim=3, rng=rng)
    included = np.array([True, False, True, False])
    np.testing.assert_array_equal(add.dataset(included), add.records[included])
    replace = vector_canaries(4, dim=3, rng=rng, replace=True)
    np.testing.assert_array_equal(replace.dataset(included)[1], -replace.records[1])
    cats = category_canaries(3, bins=4, replace=True)
    np.testing.assert_array_equal(cats.dataset([True, False, True]), [0, 3, 2])


def test_pair_canary_rebuilds_both_datasets_in_order():
    d0 = np.array([5.0, 0.0, 7.0])
    d1 = np.array([5.0, 1.0, 7.0])
    canary = pair_canary(d0, d1)
    np.testing.assert_array_equal(canary.dataset([False]), d0)
    np.testing.assert_array_equal(canary.dataset([True]), d1)


def test_category_canaries_need_enough_bins():
    with pytest.raises(InvalidParameterError, match="at least 11 bins"):
        category_canaries(10, bins=10, replace=True)


def test_one_run_inclusions_are_fair_coins_and_members_score_higher():
    rng = np.random.default_rng(3)
    mech = get_mechanism("canary_gaussian_sum", epsilon=8.0)
    canaries = vector_canaries(2000, dim=4000, rng=rng)
    obs = one_run_game(mech, canaries, scorer=InnerProduct(), rng=rng)
    assert binom.cdf(obs.n_in, 2000, 0.5) > 1e-4 and binom.sf(obs.n_in - 1, 2000, 0.5) > 1e-4
    # A member's score gains ‖c‖² = 1 over noise of sd about σ (plus cross-talk).
    gap = obs.in_scores.mean() - obs.out_scores.mean()
    assert gap == pytest.approx(1.0, abs=0.15)


def test_membership_game_separates_and_black_box_scores_tie_canaries():
    rng = np.random.default_rng(4)
    mech = get_mechanism("laplace", epsilon=2.0)
    canary = pair_canary(*mech.default_pair)
    obs = membership_game(mech, canary, runs=4000, scorer=OutputStatistic("sum"), rng=rng)
    assert abs(obs.n_in - 2000) < 4 * np.sqrt(1000)
    # Laplace(1/2): the member runs' mean is higher by the sensitivity 1; sd of the gap ≈ 0.022.
    assert obs.in_scores.mean() - obs.out_scores.mean() == pytest.approx(1.0, abs=0.1)
    scores = OutputStatistic("norm").score(np.ones((3, 4)), vector_canaries(5, dim=4, rng=rng))
    assert scores.shape == (3, 5) and np.all(scores == 2.0)


def test_inner_product_reads_category_counts_minus_the_spare_bin():
    canaries = category_canaries(2, bins=3, replace=True)
    outputs = np.array([[5.0, 1.0, 2.0]])
    np.testing.assert_array_equal(InnerProduct().score(outputs, canaries), [[3.0, -1.0]])


def test_scorer_names():
    assert isinstance(scorer_by_name("white-box"), InnerProduct)
    assert scorer_by_name("black-box-max").name == "black-box-max"
    with pytest.raises(InvalidParameterError, match="scorer"):
        scorer_by_name("oracle")
