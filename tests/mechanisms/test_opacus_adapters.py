"""Opacus' make_private on a few rows, as users call it: Opacus' own ε as the claim, the noise its divisor sets."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("opacus")

from dpaudit.audit.audits.two_dataset import audit_mechanism  # noqa: E402
from dpaudit.mechanisms import get_mechanism  # noqa: E402
from dpaudit.mechanisms.base import not_neighbours  # noqa: E402


def test_claim_is_opacus_accountant_at_both_sizes() -> None:
    from opacus.accountants import PRVAccountant

    mech = get_mechanism("opacus_make_private", rows=2, batch_size=2, noise_multiplier=3.0)
    # 2 rows in batches of 2: one step at rate 1; 3 rows: two steps at rate 1/2 (1/len(data_loader)).
    expected = {}
    for rows, rate, steps in ((2, 1.0, 1), (3, 0.5, 2)):
        accountant = PRVAccountant()
        accountant.history = [(3.0, rate, steps)]
        with np.errstate(divide="ignore"):
            expected[str(rows)] = accountant.get_epsilon(1e-5)
    assert mech.params["opacus_epsilon"] == pytest.approx(expected, rel=1e-6)
    assert mech.claim.epsilon == pytest.approx(max(expected.values()), rel=1e-6)


def test_default_pair_adds_a_record_at_the_bound() -> None:
    mech = get_mechanism("opacus_make_private")
    d0, d1 = mech.default_pair
    assert not_neighbours(mech, d0, d1) is None and d1[-1] == 1.0 and np.isnan(d0[-1])


def test_noise_in_the_weights_follows_the_divisor() -> None:
    mech = get_mechanism("opacus_make_private", rows=2, batch_size=2, noise_multiplier=3.0, dimension=16)
    d0, d1 = mech.default_pair
    n = 60
    w0 = mech.sample(d0, n, np.random.default_rng(0))
    w1 = mech.sample(d1, n, np.random.default_rng(1))
    # Records at 0 give no gradient: d0's weights are noise σC/expected_batch_size = 3/2 a coordinate (one step,
    # rate 1, divisor int(2·1) = 2). d1's two steps divide by int(3·½) = 1: noise 3√2 ≈ 4.2 a coordinate.
    # 960 coordinates each: 10% is more than 4 standard errors of a sample standard deviation (1/√(2·960) ≈ 2.3%).
    assert np.std(w0) == pytest.approx(1.5, rel=0.1)
    assert np.std(w1) > 1.5 * np.std(w0)


@pytest.mark.slow
def test_make_private_on_two_rows_is_flagged() -> None:
    """Opacus issues 571 and 819 from the released package: 500 trials certify about 4 against the claim 1.28 (35 s)."""
    result = audit_mechanism(get_mechanism("opacus_make_private"), trials=500, seed=0, confidence=0.95)
    assert result.verdict == "violation"
