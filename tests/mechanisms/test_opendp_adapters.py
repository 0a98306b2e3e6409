"""OpenDP adapters: claims from OpenDP's own maps, batched outputs, audited consistent."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("opendp")

from dpaudit.audit.audits.two_dataset import audit_mechanism  # noqa: E402
from dpaudit.mechanisms import get_mechanism  # noqa: E402


@pytest.mark.parametrize("name, claim", [("opendp_laplace", 0.5), ("opendp_discrete_laplace", 0.5),
                                         ("opendp_composed", 1.0)])
def test_claim_is_opendp_map(name: str, claim: float) -> None:
    params = {"scales": (2.0, 2.0)} if name == "opendp_composed" else {"scale": 2.0}
    assert get_mechanism(name, **params).claim.epsilon == pytest.approx(claim)


def test_batched_outputs_have_the_laplace_law() -> None:
    mech = get_mechanism("opendp_laplace", scale=2.0)
    out = mech.sample(np.array([3.0]), 20_000, np.random.default_rng(0))
    assert out.shape == (20_000,)
    assert abs(np.median(out) - 3.0) < 0.1 and abs(np.mean(np.abs(out - 3.0)) - 2.0) < 0.1


@pytest.mark.parametrize("name", ["opendp_discrete_laplace", "opendp_composed"])
def test_opendp_mechanism_is_not_flagged(name: str) -> None:
    result = audit_mechanism(get_mechanism(name), trials=20_000, seed=0, confidence=0.99)
    assert result.verdict == "consistent"
