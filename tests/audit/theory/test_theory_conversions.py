"""Conversions between pure DP, RDP, zCDP and (ε, δ) against direct computation and dp_accounting."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant
from dpaudit.audit.theory import (
    gaussian_epsilon,
    pure_to_rdp,
    pure_to_zcdp,
    rdp_to_dp,
    zcdp_delta,
    zcdp_to_dp,
    zcdp_to_dp_simple,
)
from dpaudit.errors import DPAuditError

DELTA = 1e-5


def _rr_renyi(epsilon, alpha):
    """Rényi divergence of order α between binary RR's output laws, summed directly."""
    p = np.array([math.exp(epsilon), 1.0]) / (1.0 + math.exp(epsilon))
    q = p[::-1]
    return math.log(float(np.sum(p**alpha * q ** (1.0 - alpha)))) / (alpha - 1.0)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("alpha", [1.5, 2.0, 10.0, 100.0])
def test_pure_to_rdp_is_randomized_response(epsilon, alpha):
    assert pure_to_rdp(epsilon=epsilon, alpha=alpha) == pytest.approx(_rr_renyi(epsilon, alpha), rel=1e-10)
    assert pure_to_rdp(epsilon=epsilon, alpha=alpha) <= epsilon


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_pure_to_zcdp_is_the_supremum_of_rdp_over_alpha(epsilon):
    alphas = 1.0 + np.geomspace(1e-6, 1e4, 4000)
    sup = max(pure_to_rdp(epsilon=epsilon, alpha=a) / a for a in alphas)
    rho = pure_to_zcdp(epsilon=epsilon)
    assert sup <= rho * (1 + 1e-9)
    assert sup == pytest.approx(rho, rel=1e-4)
    assert rho <= epsilon**2 / 2


def test_rdp_to_dp_matches_dp_accounting():
    orders = np.linspace(1.5, 64.0, 200)
    rdp = orders * 0.3
    expected, _ = rdp_privacy_accountant.compute_epsilon(orders, rdp, DELTA)
    assert rdp_to_dp(alphas=orders, rdp=rdp, delta=DELTA) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("sigma", [0.8, 1.0, 4.0])
def test_zcdp_conversions_are_sound_for_the_gaussian(sigma):
    rho = 1.0 / (2.0 * sigma**2)
    exact = gaussian_epsilon(delta=DELTA, sigma=sigma)
    cks = zcdp_to_dp(rho=rho, delta=DELTA)
    simple = zcdp_to_dp_simple(rho=rho, delta=DELTA)
    assert exact <= cks <= simple
    assert cks < 1.2 * exact


def test_zcdp_reference_form_and_the_two_cks_forms_agree():
    rho = 0.5
    assert zcdp_to_dp_simple(rho=rho, delta=DELTA) == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / DELTA)))
    eps = zcdp_to_dp(rho=rho, delta=DELTA)
    assert zcdp_delta(rho=rho, epsilon=eps) == pytest.approx(DELTA, rel=1e-4)
    assert zcdp_delta(rho=rho, epsilon=eps + 0.05) < DELTA < zcdp_delta(rho=rho, epsilon=eps - 0.05)


def test_zcdp_delta_bounds_each_alpha():
    rho, eps = 0.2, 1.5
    best = zcdp_delta(rho=rho, epsilon=eps)
    for alpha in np.linspace(1.05, 40.0, 300):
        each = math.exp((alpha - 1) * (alpha * rho - eps)) * (1 - 1 / alpha) ** alpha / (alpha - 1)
        assert best <= each * (1 + 1e-9)


def test_bad_input():
    with pytest.raises(DPAuditError, match="alpha"):
        pure_to_rdp(epsilon=1.0, alpha=1.0)
    with pytest.raises(DPAuditError, match="same length"):
        rdp_to_dp(alphas=[2.0, 3.0], rdp=[1.0], delta=DELTA)
