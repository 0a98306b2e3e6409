"""A game's datasets are checked as whole pairs, or, for a local check, slot by slot: the two ways give one verdict.

`require_neighbours` checks m canaries in O(m) when the mechanism's check is
local (the relation's definition, dpaudit's own checks): the whole dataset
once, then each canary's slot alone. The reference here checks every
canary's two whole datasets, as the definition says; both must refuse the
same games, and a user's check (not local) must still see whole datasets.
"""

import dataclasses

import numpy as np
import pytest
from dpaudit.attacks.canary import CanarySet, require_neighbours, vector_canaries
from dpaudit.mechanisms import InvalidParameterError, blackbox, get_mechanism
from dpaudit.mechanisms.base import not_neighbours
from dpaudit.mechanisms.datasets import records_of_pair
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VALUES = st.sampled_from([0.0, 1.0, -1.0, 2.0])


def _whole_pairs_refuse(mech, canaries: CanarySet, mask: np.ndarray) -> bool:
    """Return True when some canary's whole datasets, in and out, are not neighbours for `mech` (the definition)."""
    for i in range(canaries.size):
        with_it, without = mask.copy(), mask.copy()
        with_it[i], without[i] = True, False
        if not_neighbours(mech, *records_of_pair(canaries.dataset(with_it), canaries.dataset(without))):
            return True
    return False


def _refused(mech, canaries: CanarySet, mask: np.ndarray) -> bool:
    try:
        require_neighbours(mech, canaries, mask, remedy="test")
    except InvalidParameterError:
        return True
    return False


@st.composite
def games(draw):
    """A small vector game: m canaries of width w (duplicates likely), absent records or none, base records, a mask."""
    m, width, base = draw(st.integers(1, 5)), draw(st.integers(1, 2)), draw(st.integers(0, 3))
    row = st.lists(VALUES, min_size=width, max_size=width)
    records = np.array(draw(st.lists(row, min_size=m, max_size=m)))
    absent = np.array(draw(st.lists(row, min_size=m, max_size=m))) if draw(st.booleans()) else None
    base_records = np.array(draw(st.lists(row, min_size=base, max_size=base))).reshape(base, width)
    canaries = CanarySet("vector", records, base_records, absent, position=draw(st.integers(0, base)))
    return canaries, np.array(draw(st.lists(st.booleans(), min_size=m, max_size=m)))


MECHANISMS = {
    "add-remove": blackbox(lambda d, rng: 0.0, epsilon=1.0),
    "add-remove, null 0": blackbox(lambda d, rng: 0.0, epsilon=1.0, null_record=0.0),
    "replace-one": blackbox(lambda d, rng: 0.0, epsilon=1.0, relation="replace-one"),
    "canary_gaussian_sum": get_mechanism("canary_gaussian_sum"),
}


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@SETTINGS
@given(game=games())
def test_slot_by_slot_refuses_exactly_the_games_whole_pairs_refuse(name, game):
    canaries, mask = game
    mech = MECHANISMS[name]
    assert _refused(mech, canaries, mask) == _whole_pairs_refuse(mech, canaries, mask)


@SETTINGS
@given(m=st.integers(1, 6), bins=st.integers(2, 4), data=st.data())
def test_category_games_refuse_exactly_as_whole_pairs(m, bins, data):
    mech = get_mechanism("canary_histogram", bins=bins)
    category = st.integers(-2, bins)
    records = np.array(data.draw(st.lists(category, min_size=m, max_size=m)))
    absent = data.draw(st.one_of(st.none(), st.lists(category, min_size=m, max_size=m)))
    base = np.array(data.draw(st.lists(category, max_size=3)), dtype=int)
    canaries = CanarySet("category", records, base, None if absent is None else np.array(absent))
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=m, max_size=m)))
    assert _refused(mech, canaries, mask) == _whole_pairs_refuse(mech, canaries, mask)


def test_a_users_check_sees_the_whole_datasets():
    at_most_three = blackbox(lambda d, rng: 0.0, epsilon=1.0, neighbours=lambda a, b: len(a) <= 3)
    canaries = vector_canaries(3, dim=2, rng=np.random.default_rng(0))
    require_neighbours(at_most_three, canaries, [True, True, False], remedy="test")
    grown = dataclasses.replace(canaries, base=np.zeros((1, 2)))
    with pytest.raises(InvalidParameterError, match="canary 2 are not neighbours"):
        require_neighbours(at_most_three, grown, [True, True, False], remedy="test")
