"""Rounding datasets away from 0: generated from the bounds alone, they move an in-order float sum beyond one record's reach.

Bounds [2⁵⁰, 2⁵⁰ + 1] hold doubles a quarter apart, and 1024 of them sum near 2⁶⁰, where doubles are 256 apart
(Casacuberta et al., CCS 2022). The hunt finds a sized sum that adds its records one after another and states
the real-number sensitivity U − L; it leaves alone the same sum taken exactly (records shifted by L first).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dpaudit.attacks.neighbour_candidates import candidate_pairs
from dpaudit.attacks.rounding_datasets import rounding_datasets
from dpaudit.audit import audit_mechanism
from dpaudit.mechanisms import blackbox
from dpaudit.mechanisms.base import check_pair
from dpaudit.mechanisms.neighbours import by_relation, of_length
from dpaudit.mechanisms.records import NumberRecords

LOW, HIGH, N = 2.0**50, 2.0**50 + 1.0, 1024


def in_order(values) -> float:
    """The float sum of `values` taken one addition after another, as a loop over the records takes it."""
    total = 0.0
    for v in np.asarray(values, dtype=float).tolist():
        total += v
    return total


def sized_in_order_sum(data, rng, size):
    """BUGGY: the in-order float sum of N records in [LOW, HIGH], Laplace noise for the real sensitivity 1."""
    return in_order(data) + rng.laplace(0.0, 1.0, size)


def sized_exact_sum(data, rng, size):
    """The sum of the records less LOW (exact: quarters below 1024), Laplace noise of scale 1: 1-DP, replace-one."""
    return float(np.sum(np.asarray(data, dtype=float) - LOW)) + rng.laplace(0.0, 1.0, size)


def _sized(fn, epsilon: float = 1.0):
    records = NumberRecords(LOW, HIGH)
    d0 = np.full(N, LOW)
    d1 = d0.copy()
    d1[0] = HIGH
    return blackbox(fn, epsilon=epsilon, relation="replace-one", default_pair=(d0, d1),
                    neighbours=of_length(N, by_relation("replace-one", records=records)))


@pytest.mark.parametrize("replace", [True, False])
def test_offset_bounds_give_pairs_inside_them_one_record_apart(replace):
    pairs = rounding_datasets(LOW, HIGH, count=N, replace=replace)
    assert pairs
    for p in pairs:
        assert np.all((p.d0 >= LOW) & (p.d0 <= HIGH)) and np.all((p.d1 >= LOW) & (p.d1 <= HIGH))
        assert len(p.d1) == len(p.d0) + (0 if replace else 1)
        others = np.delete(p.d1, p.changed)
        assert np.array_equal(np.sort(others), np.sort(np.delete(p.d0, p.changed) if replace else p.d0))


def test_a_replaced_record_moves_the_in_order_sum_beyond_the_width_and_the_exact_sum_within_it():
    pairs = rounding_datasets(LOW, HIGH, count=N, replace=True)
    moved = [abs(in_order(p.d1) - in_order(p.d0)) for p in pairs]
    assert max(moved) > HIGH - LOW
    assert all(abs(math.fsum(p.d1) - math.fsum(p.d0)) <= HIGH - LOW for p in pairs)
    assert any("another order" in p.note for p in pairs)


def test_bounds_with_no_double_two_ulps_inside_give_no_offset_pair():
    assert rounding_datasets(1.0, math.nextafter(1.0, 2.0), count=10, replace=True) == []


def test_sized_candidates_keep_the_size_and_are_neighbours():
    mech = _sized(sized_in_order_sum)
    found = candidate_pairs(mech, rng=np.random.default_rng(0), kinds=["rounding"])
    assert found
    for c in found:
        check_pair(mech, c.d0, c.d1)
        assert len(c.d0) == len(c.d1) == N


def test_the_hunt_flags_an_in_order_sum_with_a_rounding_pair():
    mech = _sized(sized_in_order_sum)
    assert audit_mechanism(mech, trials=4000, seed=0).verdict == "consistent"  # the default pair's sums move by 1
    res = audit_mechanism(mech, trials=4000, seed=0, search="hunt")
    assert res.verdict == "violation" and res.phases.pair_search["kind"] == "rounding"


@pytest.mark.parametrize("seed", range(3))
def test_the_hunt_leaves_an_exact_sum_consistent(seed):
    mech = _sized(sized_exact_sum, epsilon=1.25)  # 1-DP, claimed at 1.25: a flag would be the hunt's own doing
    assert audit_mechanism(mech, trials=20_000, seed=seed, search="hunt").verdict == "consistent"
