"""OpenDP's bounded float sum of known size before the floating-point fix (0.4.0, its own environment) and in 0.16.

The rounding pairs come from the bug hunter's generator (`--hunt`), never written here: 1024 records in
[2⁵⁰, 2⁵⁰ + 1] near 2⁵⁰, one changed so that the sum, taken in order near 2⁶⁰ where doubles are 256 apart,
rounds another way. OpenDP 0.4.0's sum moves by 256 where it states 1; 0.16 states 5121 (its rounding bound).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("opendp")

from dpaudit.attacks.neighbour_candidates import candidate_pairs  # noqa: E402
from dpaudit.audit.audits.two_dataset import audit_mechanism  # noqa: E402
from dpaudit.mechanisms import get_mechanism  # noqa: E402
from dpaudit.mechanisms.base import not_neighbours  # noqa: E402

BIG = 2.0**50


def _in_order(values: np.ndarray) -> float:
    total = 0.0
    for v in values.tolist():
        total += v
    return total


def _rounding_pair(mech) -> tuple[np.ndarray, np.ndarray]:
    """Return the first generated rounding pair, checked to move a float sum taken in order by more than U − L."""
    first = candidate_pairs(mech, rng=np.random.default_rng(0), kinds=["rounding"])[0]
    d0, d1 = np.asarray(first.d0), np.asarray(first.d1)
    assert abs(_in_order(d1) - _in_order(d0)) > 1.0
    return d0, d1


def test_fixed_release_claims_the_chain_check_and_holds_on_the_rounding_pair() -> None:
    mech = get_mechanism("opendp_sized_sum", lower=BIG, upper=BIG + 1, size=1024)
    d0, d1 = _rounding_pair(mech)
    assert not_neighbours(mech, d0, d1) is None
    assert mech.claim.epsilon <= 1.0
    result = audit_mechanism(mech, d0, d1, trials=1000, seed=0, confidence=0.99)
    assert result.verdict == "consistent"


def test_sized_sum_refuses_another_size() -> None:
    mech = get_mechanism("opendp_sized_sum", size=4)
    assert not_neighbours(mech, np.zeros(3), np.array([1.0, 0.0, 0.0])) is not None


@pytest.mark.libraries
def test_old_release_is_flagged_on_the_rounding_pair_and_by_the_hunt_and_not_on_the_default() -> None:
    mech = get_mechanism("opendp_0_4_sized_sum", lower=BIG, upper=BIG + 1, size=1024)
    assert mech.params["opendp"] == "0.4.0" and mech.claim.epsilon == pytest.approx(1.0, rel=1e-6)
    d0, d1 = _rounding_pair(mech)
    assert audit_mechanism(mech, d0, d1, trials=2000, seed=0, confidence=0.95).verdict == "violation"
    hunted = audit_mechanism(mech, trials=2000, seed=0, search="hunt")
    assert hunted.verdict == "violation" and hunted.phases.pair_search["kind"] == "rounding"
    default = get_mechanism("opendp_0_4_sized_sum")
    assert audit_mechanism(default, trials=2000, seed=0, confidence=0.99).verdict == "consistent"
