"""Canary games: inclusion is a fair coin, scores shift for members, datasets hold the right records."""

import numpy as np
import pytest
from dpaudit.attacks.canary import (
    box_canaries,
    box_ends,
    category_canaries,
    membership_game,
    pair_canary,
    sparse_canaries,
    vector_canaries,
)
from dpaudit.attacks.canary_scores import InnerProduct, OutputStatistic, scorer_by_name
from dpaudit.attacks.one_run_game import one_run_game
from dpaudit.mechanisms import InvalidParameterError, get_mechanism
from dpaudit.mechanisms.records import BoxRecords
from scipy.stats import binom


def test_vector_canaries_have_the_norm_and_are_nearly_orthogonal():
    rng = np.random.default_rng(0)
    canaries = vector_canaries(50, dim=4000, norm=2.0, rng=rng)
    gram = canaries.records @ canaries.records.T
    np.testing.assert_allclose(np.diag(gram), 4.0)
    # Off-diagonal ⟨c_i, c_j⟩ has sd norm²/√dim = 0.063; 6 sd bounds all 1225 pairs.
    assert np.abs(gram[~np.eye(50, dtype=bool)]).max() < 6 * 4.0 / np.sqrt(4000)


def test_sparse_canaries_are_orthogonal_up_to_their_width_and_distinct_up_to_twice_it():
    canaries = sparse_canaries(10, dim=10, rng=np.random.default_rng(1))
    np.testing.assert_allclose(canaries.records @ canaries.records.T, np.eye(10))
    twice = sparse_canaries(20, dim=10, norm=2.0, rng=np.random.default_rng(1)).records
    assert twice.shape == (20, 10) and len(np.unique(twice, axis=0)) == 20
    np.testing.assert_allclose(np.abs(twice).sum(axis=1), 2.0)
    with pytest.raises(InvalidParameterError, match="at most 20 distinct"):
        sparse_canaries(21, dim=10, rng=np.random.default_rng(1))


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
    with pytest.raises(InvalidParameterError, match="at least 12 bins"):
        category_canaries(10, bins=11, replace=True, null_record=0)


def test_category_canaries_skip_the_null_record():
    cats = category_canaries(3, bins=5, replace=True, null_record=1)
    np.testing.assert_array_equal(cats.records, [0, 2, 3])
    np.testing.assert_array_equal(cats.absent, [4, 4, 4])


@pytest.mark.parametrize(("low", "high", "null", "near", "far"), [
    (-1.0, 0.0, None, 0.0, -1.0), (0.0, 1.0, None, 0.0, 1.0), (2.0, 5.0, None, 2.0, 5.0),
    (-1.0, 1.0, None, -1.0, 1.0), (2.0, 5.0, 5.0, 5.0, 2.0), (-1.0, 0.0, "none", 0.0, -1.0),
])
def test_box_ends_put_the_far_end_away_from_the_null_record(low, high, null, near, far):
    got_near, got_far = box_ends(BoxRecords(low, high, 3), null)
    np.testing.assert_array_equal(got_near, [near] * 3)
    np.testing.assert_array_equal(got_far, [far] * 3)


@pytest.mark.parametrize("replace", [False, True])
def test_box_canaries_are_never_the_near_corner(replace):
    spec = BoxRecords(-1.0, 0.0, 2)
    canaries = box_canaries(400, spec=spec, rng=np.random.default_rng(5), replace=replace)
    assert np.all((canaries.records == -1.0).any(axis=1))
    assert {tuple(r) for r in canaries.records} == {(-1.0, -1.0), (-1.0, 0.0), (0.0, -1.0)}
    worst = box_canaries(3, spec=spec, rng=np.random.default_rng(5), replace=replace, worst=True)
    np.testing.assert_array_equal(worst.records, np.full((3, 2), -1.0))
    if replace:
        np.testing.assert_array_equal(worst.absent, np.zeros((3, 2)))


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
