"""Composition theorems against the KOV formula, enumeration of k-fold RR, PLD and RDP."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from dp_accounting.pld import common
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dpaudit.audit.theory import (
    advanced_composition,
    basic_composition,
    kov_closed_form,
    kov_delta,
    kov_epsilon,
    kov_heterogeneous,
    pld_composition_epsilon,
    rdp_composition_epsilon,
)
from scipy import stats

DELTA = 1e-5


def _kov_delta_i(epsilon, k, i):
    """δ_i of KOV Thm 3.3, summed literally with exact rationals for C(k, ℓ) and floats for e^x."""
    total = Fraction(0)
    for ell in range(i):
        term = math.exp((k - ell) * epsilon) - math.exp((k - 2 * i + ell) * epsilon)
        total += math.comb(k, ell) * Fraction(term)
    return float(total / Fraction((1 + math.exp(epsilon)) ** k))


def _kfold_rr_delta(epsilon, epsilon0, k):
    j = np.arange(k + 1)
    pmf = stats.binom.pmf(j, k, 1.0 / (1.0 + math.exp(-epsilon0)))
    loss = (2 * j - k) * epsilon0
    return float(np.sum(pmf * np.maximum(0.0, -np.expm1(epsilon - loss))))


def test_reference_check_values():
    assert basic_composition(epsilon=0.1, k=100) == (pytest.approx(10.0), 0.0)
    assert round(advanced_composition(epsilon=0.1, k=100, delta_prime=DELTA)[0], 3) == 5.850
    assert round(kov_closed_form(epsilon=0.1, k=100, delta_prime=DELTA)[0], 3) == 5.298
    assert round(kov_epsilon(epsilon=0.1, k=100, target_delta=DELTA), 3) == 4.307
    assert round(pld_composition_epsilon(epsilon=0.1, k=100, target_delta=DELTA), 3) == 4.307


@pytest.mark.parametrize("epsilon,k", [(0.4, 5), (0.1, 30), (1.0, 12)])
def test_kov_delta_equals_theorem_3_3_at_its_points(epsilon, k):
    for i in range(k // 2 + 1):
        assert kov_delta(epsilon=epsilon, k=k, target_epsilon=(k - 2 * i) * epsilon) == pytest.approx(
            _kov_delta_i(epsilon, k, i), rel=1e-9, abs=1e-15
        )


@pytest.mark.parametrize("epsilon,k", [(0.3, 7), (0.05, 200)])
def test_kov_delta_equals_kfold_randomized_response_everywhere(epsilon, k):
    for target in np.linspace(0.0, k * epsilon / 2, 7):
        assert kov_delta(epsilon=epsilon, k=k, target_epsilon=target) == pytest.approx(
            _kfold_rr_delta(target, epsilon, k), rel=1e-8, abs=1e-15
        )


def test_kov_with_delta_adds_the_atom():
    d0, k = 1e-4, 50
    assert kov_delta(epsilon=0.2, delta=d0, k=k, target_epsilon=100.0) == pytest.approx(1 - (1 - d0) ** k)
    assert math.isinf(kov_epsilon(epsilon=0.2, delta=d0, k=k, target_delta=1e-3))


def test_kov_epsilon_is_sound_and_tight_for_large_k():
    k, eps0 = 400, 0.05
    eps = kov_epsilon(epsilon=eps0, k=k, target_delta=DELTA)
    assert _kfold_rr_delta(eps, eps0, k) <= DELTA * (1 + 1e-9)
    assert _kfold_rr_delta(eps - 1e-4, eps0, k) > DELTA


@pytest.mark.parametrize("epsilon,k,d0", [(0.1, 100, 0.0), (0.5, 20, 1e-7), (1.0, 10, 0.0)])
def test_ordering_of_bounds_and_pld_agreement(epsilon, k, d0):
    target = 1e-5 + k * d0
    exact = kov_epsilon(epsilon=epsilon, delta=d0, k=k, target_delta=target)
    pld = pld_composition_epsilon(epsilon=epsilon, delta=d0, k=k, target_delta=target)
    closed, _ = kov_closed_form(epsilon=epsilon, delta=d0, k=k, delta_prime=1 - (1 - target) / (1 - d0) ** k)
    assert exact <= pld + 1e-9 and pld - exact < 2e-3
    assert exact <= closed <= basic_composition(epsilon=epsilon, k=k)[0] + 1e-12
    if d0 == 0:
        assert exact <= rdp_composition_epsilon(epsilon=epsilon, k=k, target_delta=target)


def test_heterogeneous_reduces_to_closed_form_and_bounds_the_pld():
    homo = kov_heterogeneous(epsilons=[0.2] * 40, delta_prime=DELTA)
    assert homo == pytest.approx(kov_closed_form(epsilon=0.2, k=40, delta_prime=DELTA))
    epsilons = [0.05] * 50 + [0.3] * 10 + [1.0] * 2
    bound, total = kov_heterogeneous(epsilons=epsilons, deltas=[1e-8] * len(epsilons), delta_prime=DELTA)
    composed = pld_lib.identity()
    for eps in epsilons:
        params = common.DifferentialPrivacyParameters(epsilon=eps, delta=1e-8)
        composed = composed.compose(pld_lib.from_privacy_parameters(params))
    assert composed.get_epsilon_for_delta(total) <= bound
    assert bound <= sum(epsilons) + 1e-12


def test_advanced_composition_delta_accounting():
    eps, total = advanced_composition(epsilon=0.1, delta=1e-7, k=100, delta_prime=DELTA)
    assert total == pytest.approx(100 * 1e-7 + DELTA)
    assert kov_epsilon(epsilon=0.1, delta=1e-7, k=100, target_delta=total) <= eps
