"""OpenDP's bounded float sum of known size before the floating-point fix (0.4.0, its own environment) and in 0.16.

One rounding pair for both, from the family the bug hunter generates (many records near a power of two, one
moved so the rounding changes): 1024 records in [2⁵⁰, 2⁵⁰ + 1], 527 at 2⁵⁰ + ¼ and the rest at 2⁵⁰, the last
replaced by 2⁵⁰ + ¼. OpenDP 0.4.0's sum moves by 256 where it states 1; 0.16 states 5121 (its rounding bound).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("opendp")

from dpaudit.audit.audits.two_dataset import audit_mechanism  # noqa: E402
from dpaudit.mechanisms import get_mechanism  # noqa: E402
from dpaudit.mechanisms.base import not_neighbours  # noqa: E402

BIG = 2.0**50


def _rounding_pair() -> tuple[np.ndarray, np.ndarray]:
    d0 = np.array([BIG + 0.25] * 527 + [BIG] * 497)
    d1 = d0.copy()
    d1[-1] = BIG + 0.25
    return d0, d1


def test_fixed_release_claims_the_chain_check_and_holds_on_the_rounding_pair() -> None:
    mech = get_mechanism("opendp_sized_sum", lower=BIG, upper=BIG + 1, size=1024)
    d0, d1 = _rounding_pair()
    assert not_neighbours(mech, d0, d1) is None
    assert mech.claim.epsilon <= 1.0
    result = audit_mechanism(mech, d0, d1, trials=1000, seed=0, confidence=0.99)
    assert result.verdict == "consistent"


def test_sized_sum_refuses_another_size() -> None:
    mech = get_mechanism("opendp_sized_sum", size=4)
    assert not_neighbours(mech, np.zeros(3), np.array([1.0, 0.0, 0.0])) is not None


@pytest.mark.libraries
def test_old_release_is_flagged_on_the_rounding_pair_and_not_on_the_default() -> None:
    mech = get_mechanism("opendp_0_4_sized_sum", lower=BIG, upper=BIG + 1, size=1024)
    assert mech.params["opendp"] == "0.4.0" and mech.claim.epsilon == pytest.approx(1.0, rel=1e-6)
    d0, d1 = _rounding_pair()
    assert audit_mechanism(mech, d0, d1, trials=2000, seed=0, confidence=0.95).verdict == "violation"
    default = get_mechanism("opendp_0_4_sized_sum")
    assert audit_mechanism(default, trials=2000, seed=0, confidence=0.99).verdict == "consistent"
