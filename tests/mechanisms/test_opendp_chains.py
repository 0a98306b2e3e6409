"""OpenDP transformations chained with a measurement as its docs show: claims from OpenDP's maps, records as users pass them."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("opendp")

from dpaudit.attacks.neighbour_candidates import candidate_pairs  # noqa: E402
from dpaudit.audit.audits.two_dataset import audit_mechanism  # noqa: E402
from dpaudit.mechanisms import get_mechanism  # noqa: E402
from dpaudit.mechanisms.base import not_neighbours  # noqa: E402

CHAINS = ["opendp_sum", "opendp_mean", "opendp_variance", "opendp_sum_of_squared_deviations", "opendp_quantile"]


@pytest.mark.parametrize("name", CHAINS)
def test_claim_is_the_chain_map_at_the_searched_scale(name: str) -> None:
    mech = get_mechanism(name, epsilon=0.5)
    # binary_search_param returns the smallest scale it finds whose map(1) is at most ε: the claim is that map.
    assert mech.claim.epsilon <= 0.5
    assert mech.claim.epsilon == pytest.approx(0.5, rel=1e-3)


@pytest.mark.parametrize("name", CHAINS)
def test_default_pair_is_one_record_added(name: str) -> None:
    mech = get_mechanism(name)
    d0, d1 = mech.default_pair
    assert not_neighbours(mech, d0, d1) is None
    assert np.isnan(d0[-1]) and not np.isnan(d1[-1])


def test_sum_upper_bound_is_dpaudits_laplace_below_the_claim() -> None:
    from dpaudit.audit.theory import upper_bound

    mech = get_mechanism("opendp_sum", epsilon=1.0, lower=-2.0, upper=1.0)
    bound = upper_bound(mech.event, delta=0.0)
    # Laplace(scale) on a sum of records in [-2, 1]: one record moves it by at most 2, so ε = 2 / scale.
    assert bound.epsilon == pytest.approx(2.0 / mech.params["scale"], rel=1e-6)
    assert bound.epsilon <= mech.claim.epsilon


def test_sum_clamps_and_drops_absent_records() -> None:
    mech = get_mechanism("opendp_sum", epsilon=1.0, lower=-2.0, upper=1.0)
    n = 4000
    out = mech.sample(np.array([100.0, np.nan, 0.5]), n, np.random.default_rng(0))
    scale = mech.params["scale"]
    # Laplace(scale) noise: the mean of n draws is within 5 standard errors (√2·scale/√n) of 1 + 0.5.
    assert abs(out.mean() - 1.5) < 5 * np.sqrt(2) * scale / np.sqrt(n)


@pytest.mark.parametrize("name", ["opendp_sum", "opendp_mean"])
def test_chain_is_not_flagged_at_its_default_pair(name: str) -> None:
    result = audit_mechanism(get_mechanism(name), trials=3000, seed=0, confidence=0.99)
    assert result.verdict == "consistent"


def test_issue_2923_datasets_are_among_the_hunt_candidates() -> None:
    """The bug hunter generates the issue's pair from the declared bounds: 1024 records at 2⁵⁰ + ¼, 2⁵⁰ + ½ added."""
    big = 2.0**50
    mech = get_mechanism("opendp_sum_of_squared_deviations", lower=big, upper=big + 1, size=1024)
    issue = (np.append(np.full(1024, big + 0.25), np.nan), np.append(np.full(1024, big + 0.25), big + 0.5))
    found = candidate_pairs(mech, rng=np.random.default_rng(0), kinds=["rounding"])
    assert any(np.array_equal(c.d0, issue[0], equal_nan=True) and np.array_equal(c.d1, issue[1]) for c in found)


@pytest.mark.slow
def test_sum_of_squared_deviations_rounding_pair_is_flagged() -> None:
    """OpenDP issue 2923's datasets: records near 2⁵⁰, one moved by ¼ changes how the mean rounds (84 s)."""
    big = 2.0**50
    mech = get_mechanism("opendp_sum_of_squared_deviations", lower=big, upper=big + 1, size=1024)
    d0 = np.append(np.full(1024, big + 0.25), np.nan)
    d1 = np.append(np.full(1024, big + 0.25), big + 0.5)
    result = audit_mechanism(mech, d0, d1, trials=10_000, seed=0, confidence=0.95)
    assert result.verdict == "violation"
