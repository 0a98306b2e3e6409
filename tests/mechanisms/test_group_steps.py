"""`group(mech, k)` accepts exactly the pairs at most k steps of `mech`'s relation apart, against a breadth-first search."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import blackbox
from dpaudit.mechanisms.base import not_neighbours
from dpaudit.mechanisms.neighbours import records_in
from dpaudit.mechanisms.transforms import group
from hypothesis import given, settings
from hypothesis import strategies as st

ALPHABET = (0, 1, 2)


def _release(data, rng, size):
    return np.sum(data) + rng.laplace(0.0, 1.0, size)


def _steps(d: tuple[int, ...], relation: str, null) -> set[tuple[int, ...]]:
    """Return every dataset one step of the relation's definition away from d (records from ALPHABET)."""
    out = set()
    for i, v in itertools.product(range(len(d)), ALPHABET):
        if v != d[i] and (relation == "replace-one" or null in (v, d[i])):
            out.add(d[:i] + (v,) + d[i + 1:])
    if relation == "add-remove":
        out |= {d[:i] + d[i + 1:] for i in range(len(d))}
        out |= {d[:i] + (v,) + d[i:] for i in range(len(d) + 1) for v in ALPHABET}
    return out


def _distance(a: tuple[int, ...], b: tuple[int, ...], relation: str, null, limit: int) -> int:
    """Return the fewest steps from a to b by breadth-first search, or limit + 1 beyond `limit`."""
    frontier, seen = {a}, {a}
    for distance in range(limit + 1):
        if b in frontier:
            return distance
        frontier = {n for d in frontier for n in _steps(d, relation, null)} - seen
        seen |= frontier
    return limit + 1


datasets = st.lists(st.sampled_from(ALPHABET), min_size=0, max_size=4).map(tuple)


@settings(max_examples=300, deadline=None)
@given(a=datasets, b=datasets, k=st.integers(1, 3), relation=st.sampled_from(["add-remove", "replace-one"]),
       null=st.sampled_from([None, 0]))
def test_group_accepts_exactly_the_pairs_within_k_steps(a, b, k, relation, null) -> None:
    mech = blackbox(_release, epsilon=1.0, relation=relation, null_record=null)
    accepted = not_neighbours(group(mech, k), np.asarray(a, dtype=float), np.asarray(b, dtype=float)) is None
    assert accepted == (_distance(a, b, relation, null, k) <= k)


@settings(max_examples=200, deadline=None)
@given(a=datasets, b=datasets, null=st.sampled_from([None, 0]), custom=st.booleans())
def test_a_group_of_one_accepts_what_the_mechanism_accepts(a, b, null, custom) -> None:
    check = records_in(0.0, 1.0) if custom else None
    mech = blackbox(_release, epsilon=1.0, null_record=null, neighbours=check)
    d0, d1 = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not_neighbours(group(mech, 1), d0, d1) is None:
        assert not_neighbours(mech, d0, d1) is None


def test_replaced_records_are_two_add_remove_steps_each() -> None:
    mech = blackbox(_release, epsilon=1.0)
    assert "more than 2 add-remove steps" in not_neighbours(group(mech, 2), np.zeros(2), np.ones(2))
    assert not_neighbours(group(mech, 4), np.zeros(2), np.ones(2)) is None
    assert not_neighbours(group(mech, 2), np.zeros(1), np.array([0.0, 1.0, 1.0])) is None


def test_a_group_keeps_the_inner_checks_domain() -> None:
    mech = blackbox(_release, epsilon=1.0, neighbours=records_in(0.0, 1.0), null_record=0.0)
    assert not_neighbours(group(mech, 2), np.zeros(3), np.array([0.0, 5.0, 0.0])) is not None
    assert not_neighbours(group(mech, 2), np.zeros(3), np.array([0.0, 1.0, 1.0])) is None


def test_a_default_pair_that_adds_a_record_grows_k_records() -> None:
    mech = blackbox(_release, epsilon=1.0, default_pair=([1.0], [1.0, 2.0]))
    d0, d1 = group(mech, 3).default_pair
    assert d0.tolist() == [1.0] and d1.tolist() == [1.0, 2.0, 2.0, 2.0]
    assert not_neighbours(group(mech, 3), d0, d1) is None


def test_a_default_pair_that_differs_otherwise_is_refused_in_one_sentence() -> None:
    mech = blackbox(_release, epsilon=1.0, default_pair=([1.0], [2.0, 3.0, 4.0]))
    with pytest.raises(InvalidParameterError, match="one record added"):
        group(mech, 2)
