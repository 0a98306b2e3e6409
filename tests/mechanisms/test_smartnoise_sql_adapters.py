"""SmartNoise SQL adapters: claims from SmartNoise's own accounting, releases as users get them, audited consistent.

Marked `libraries`: the "smartnoise-sql" environment is built on first use (about 30 s with uv). Registration
alone builds nothing, which the first test checks in the default run.
"""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.mechanisms import get_mechanism, list_mechanisms
from dpaudit.mechanisms.base import not_neighbours
from dpaudit.mechanisms.outputs import NONFINITE

QUERIES = ["smartnoise_count", "smartnoise_sum", "smartnoise_avg", "smartnoise_var", "smartnoise_grouped_count"]


def test_every_query_is_registered_without_building_anything(tmp_path, monkeypatch):
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path))
    assert set(QUERIES) <= set(list_mechanisms())
    assert not any(tmp_path.iterdir())


@pytest.mark.libraries
@pytest.mark.parametrize("name, cost", [("smartnoise_count", 1.0), ("smartnoise_sum", 2.0), ("smartnoise_avg", 3.0),
                                        ("smartnoise_var", 4.0), ("smartnoise_grouped_count", 1.0)])
def test_claim_is_smartnoise_cost_of_the_query(name: str, cost: float) -> None:
    # get_privacy_cost: ε per noisy column (the key count that censors rows, then SUM, COUNT, SUM of squares).
    mech = get_mechanism(name, epsilon=1.0, delta=1e-5)
    assert mech.claim.epsilon == pytest.approx(cost)
    assert 0 < mech.claim.delta < 1e-4
    d0, d1 = mech.default_pair
    assert not_neighbours(mech, d0, d1) is None


@pytest.mark.libraries
def test_sum_release_is_the_clamped_sum_with_its_laplace_noise() -> None:
    mech = get_mechanism("smartnoise_sum", epsilon=1.0, lower=-2.0, upper=1.0)
    n = 2000
    rows = np.array([5.0] * 40 + [np.nan])  # clamped to 1 each: the sum is 40
    out = mech.sample(rows, n, np.random.default_rng(0))
    # A row every time: 40 + Laplace(1) falls below τ ≈ 11.8 with probability ½e^{-28.2} ≈ 3e-13 a draw (SmartNoise's
    # generator is not seeded; with 20 records, ½e^{-8.2} a draw, 2,000 draws censored one about a run in four).
    assert out.shape == (n,) and (out != NONFINITE).all()
    # Laplace of scale 2 (sensitivity max(|L|, |U|) = 2 at ε = 1): mean within 5 standard errors (√2·2/√n) of 40.
    assert abs(out.mean() - 40.0) < 5 * np.sqrt(2) * 2 / np.sqrt(n)


@pytest.mark.libraries
def test_grouped_count_censors_a_group_of_one_record() -> None:
    mech = get_mechanism("smartnoise_grouped_count", groups=2)
    out = mech.sample(np.array([0.0] * 40 + [1.0]), 500, np.random.default_rng(0))
    # Group 1 holds one record: released only when 1 + Laplace(1) exceeds τ ≈ 11.8, with probability ½e^{-10.8} ≈ 1e-5
    # a draw (SmartNoise's generator is not seeded): 3 or more of 500 has probability about 2e-8. A censored group
    # reads NaN, which the audit maps to NONFINITE; group 0's 40 records are always released.
    assert out.shape == (500, 2)
    assert (out[:, 1] != NONFINITE).sum() <= 2 and (out[:, 0] != NONFINITE).all()


@pytest.mark.libraries
@pytest.mark.parametrize("name", ["smartnoise_count", "smartnoise_sum"])
def test_query_is_not_flagged_at_its_default_pair(name: str) -> None:
    result = audit_mechanism(get_mechanism(name), trials=2000, seed=0, confidence=0.99)
    assert result.verdict == "consistent"
