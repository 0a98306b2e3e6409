"""upper_bound: exact forms agree with dp_accounting's PLD accountant, and every bound is sound."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event as de
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.privacy_accountant import NeighboringRelation
from dpaudit.audit.theory import UpperBound, upper_bound
from dpaudit.errors import DPAuditError
from dpaudit.mechanisms.events import DiscreteGaussianDpEvent, EpsilonDeltaDpEvent, GroupDpEvent, ShuffledDpEvent
from scipy import integrate, stats

DELTA = 1e-5
PLD_SLACK = 2e-3  # the accountant's pessimistic discretization (1e-4 per loss value) stays within this


def _accountant_epsilon(event, delta, relation=NeighboringRelation.ADD_OR_REMOVE_ONE, count=1):
    accountant = pld_privacy_accountant.PLDAccountant(relation)
    accountant.compose(event, count)
    return accountant.get_epsilon(delta)


def _rr_kfold_delta(epsilon, epsilon0, k):
    """δ(ε) of k-fold binary RR by enumerating its privacy loss (2j − k)ε0, j ~ Bin(k, e^ε0/(1+e^ε0))."""
    j = np.arange(k + 1)
    p = stats.binom.pmf(j, k, 1.0 / (1.0 + math.exp(-epsilon0)))
    loss = (2 * j - k) * epsilon0
    return float(np.sum(p * np.maximum(0.0, -np.expm1(epsilon - loss))))


@pytest.mark.parametrize("scale", [0.5, 1.0, 4.0])
def test_laplace_exact_agrees_with_pld_and_is_no_larger(scale):
    bound = upper_bound(de.LaplaceDpEvent(scale), delta=DELTA)
    pld = _accountant_epsilon(de.LaplaceDpEvent(scale), DELTA)
    assert bound.method == "exact"
    assert bound.epsilon <= pld + 1e-9
    assert pld - bound.epsilon < PLD_SLACK


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
def test_gaussian_exact_agrees_with_pld(sigma):
    bound = upper_bound(de.GaussianDpEvent(sigma), delta=DELTA)
    pld = _accountant_epsilon(de.GaussianDpEvent(sigma), DELTA)
    assert bound.method == "exact"
    assert abs(bound.epsilon - pld) < PLD_SLACK


def test_gaussian_check_value_and_sound_by_integration():
    eps = upper_bound(de.GaussianDpEvent(1.0), delta=DELTA).epsilon
    assert round(eps, 3) == 4.377

    def hockey_stick(e):
        def integrand(x):
            return max(0.0, stats.norm.pdf(x) - math.exp(e) * stats.norm.pdf(x, loc=1.0))
        return integrate.quad(integrand, -40, 40, points=[0.5 - e], limit=200, epsabs=1e-13)[0]

    assert hockey_stick(eps) <= DELTA * (1 + 1e-6)
    assert hockey_stick(eps - 1e-3) > DELTA


def test_gaussian_composition_exact_agrees_with_accountant_count():
    event = de.SelfComposedDpEvent(de.GaussianDpEvent(2.0), 16)
    bound = upper_bound(event, delta=DELTA)
    assert bound.method == "exact"
    assert abs(bound.epsilon - _accountant_epsilon(de.GaussianDpEvent(2.0), DELTA, count=16)) < PLD_SLACK
    assert bound.epsilon == pytest.approx(upper_bound(de.GaussianDpEvent(0.5), delta=DELTA).epsilon)


def test_replace_one_gaussian_matches_accountant():
    bound = upper_bound(de.GaussianDpEvent(1.0), delta=DELTA, relation="replace-one")
    pld = _accountant_epsilon(de.GaussianDpEvent(1.0), DELTA, NeighboringRelation.REPLACE_ONE)
    assert abs(bound.epsilon - pld) < PLD_SLACK


@pytest.mark.parametrize("noise,buckets", [(0.5, 2), (0.3, 5)])
def test_randomized_response_exact_agrees_with_pld(noise, buckets):
    event = de.RandomizedResponseDpEvent(noise, buckets)
    bound = upper_bound(event, delta=DELTA)
    pld = _accountant_epsilon(event, DELTA, NeighboringRelation.REPLACE_ONE)
    assert bound.method == "exact"
    assert bound.epsilon <= pld + 1e-9 and pld - bound.epsilon < PLD_SLACK


def test_randomized_response_count_defect_is_guarded():
    rr = de.RandomizedResponseDpEvent(0.5, 2)
    k = 12
    looped = pld_privacy_accountant.PLDAccountant(NeighboringRelation.REPLACE_ONE)
    for _ in range(k):
        looped.compose(rr)
    expected = looped.get_epsilon(DELTA)
    assert _accountant_epsilon(rr, DELTA, NeighboringRelation.REPLACE_ONE, count=k) < expected / 2  # the defect
    self_composed = upper_bound(de.SelfComposedDpEvent(rr, k), delta=DELTA)
    listed = upper_bound(de.ComposedDpEvent([rr] * k), delta=DELTA)
    assert abs(self_composed.epsilon - expected) < PLD_SLACK
    assert abs(listed.epsilon - expected) < PLD_SLACK


def test_randomized_response_kfold_sound_and_tight_by_enumeration():
    rr = de.RandomizedResponseDpEvent(0.5, 2)  # ε0 = log 3
    k = 20
    eps = upper_bound(de.SelfComposedDpEvent(rr, k), delta=DELTA).epsilon
    assert _rr_kfold_delta(eps, math.log(3.0), k) <= DELTA
    assert _rr_kfold_delta(eps - 0.05, math.log(3.0), k) > DELTA


def test_laplace_composition_sound_against_pure_and_below_basic():
    bound = upper_bound(de.SelfComposedDpEvent(de.LaplaceDpEvent(10.0), 100), delta=DELTA)
    assert bound.method == "pld"
    assert bound.epsilon < 10.0
    assert upper_bound(de.SelfComposedDpEvent(de.LaplaceDpEvent(10.0), 100), delta=0.0).epsilon >= 10.0 - 1e-9


def test_claim_proof():
    assert upper_bound(EpsilonDeltaDpEvent(1.0, 0.0), delta=0.0) == UpperBound(1.0, 0.0, "claim-proof")
    within = upper_bound(EpsilonDeltaDpEvent(1.0, 1e-6), delta=DELTA)
    assert within.method == "claim-proof" and 0.99 < within.epsilon <= 1.0
    assert math.isinf(upper_bound(EpsilonDeltaDpEvent(1.0, 1e-3), delta=DELTA).epsilon)


def test_shuffling_uses_fmt_and_never_exceeds_local_epsilon():
    n, eps0 = 100_000, 1.0
    a = 8 * math.sqrt(math.exp(eps0) * math.log(4 / DELTA) / n) + 8 * math.exp(eps0) / n
    paper = math.log1p((math.exp(eps0) - 1) / (math.exp(eps0) + 1) * a)
    bound = upper_bound(ShuffledDpEvent(eps0, n), delta=DELTA)
    assert bound.method == "shuffling-fmt"
    assert paper <= bound.epsilon < 1.2 * paper
    assert upper_bound(ShuffledDpEvent(5.0, 1000), delta=DELTA).epsilon == 5.0


def test_group_privacy():
    assert upper_bound(GroupDpEvent(de.LaplaceDpEvent(1.0), 3), delta=0.0).epsilon == pytest.approx(3.0)
    pure = upper_bound(GroupDpEvent(EpsilonDeltaDpEvent(0.5, 0.0), 4), delta=DELTA)
    assert pure.method == "group" and pure.epsilon <= 2.0 + 1e-12
    approx = upper_bound(GroupDpEvent(EpsilonDeltaDpEvent(0.5, 1e-7), 3), delta=DELTA).epsilon
    inner_delta = 1e-7 * (math.exp(approx) - 1) / (math.exp(approx / 3) - 1)
    assert approx <= 1.5 and inner_delta <= DELTA
    assert math.isinf(upper_bound(GroupDpEvent(EpsilonDeltaDpEvent(0.5, 1e-3), 3), delta=DELTA).epsilon)


def _discrete_gaussian_delta(epsilon, sigma, sensitivity):
    """δ(ε) of the discrete Gaussian by summing max(0, p(k) − e^ε p(k − Δ)) over the integers within 40σ of 0."""
    k = np.arange(-40 * math.ceil(sigma), 40 * math.ceil(sigma) + sensitivity + 1)
    p, q = np.exp(-k**2 / (2 * sigma**2)), np.exp(-((k - sensitivity) ** 2) / (2 * sigma**2))
    return float(np.sum(np.maximum(0.0, p / p.sum() - math.exp(epsilon) * q / q.sum())))


@pytest.mark.parametrize(("sigma", "sensitivity"), [(1.0, 1), (4.0, 1), (4.0, 4), (8.0, 1)])
def test_discrete_gaussian_is_sound_by_enumeration_and_close_to_the_gaussian(sigma, sensitivity):
    bound = upper_bound(DiscreteGaussianDpEvent(sigma, sensitivity), delta=DELTA)
    assert bound.method == "pld"
    assert _discrete_gaussian_delta(bound.epsilon, sigma, sensitivity) <= DELTA
    # At σ ≥ 1 its profile is close to the Gaussian's at σ/Δ (Canonne, Kamath, Steinke 2020).
    gaussian = upper_bound(de.GaussianDpEvent(sigma / sensitivity), delta=DELTA).epsilon
    assert abs(bound.epsilon / gaussian - 1) < 0.02
    assert math.isinf(upper_bound(DiscreteGaussianDpEvent(sigma, sensitivity), delta=0.0).epsilon)


def test_composed_with_parts_without_pld_is_at_least_each_part():
    event = de.ComposedDpEvent([ShuffledDpEvent(1.0, 100_000), de.LaplaceDpEvent(1.0)])
    bound = upper_bound(event, delta=DELTA)
    assert bound.method == "pld"
    assert 1.0 <= bound.epsilon <= 1.0 + upper_bound(ShuffledDpEvent(1.0, 100_000), delta=DELTA / 2).epsilon + 1e-3


def test_non_private_and_unknown():
    assert upper_bound(de.NonPrivateDpEvent(), delta=DELTA).to_dict()["epsilon"] is None
    unknown = upper_bound(de.ComposedDpEvent([de.UnsupportedDpEvent(), de.LaplaceDpEvent(1.0)]), delta=DELTA)
    assert math.isinf(unknown.epsilon) and unknown.method == "unknown"
    assert upper_bound(de.GaussianDpEvent(1.0), delta=DELTA).to_dict() == {
        "epsilon": pytest.approx(4.37718, abs=1e-5),
        "delta": DELTA,
        "method": "exact",
    }


def test_bad_input():
    with pytest.raises(DPAuditError, match="relation"):
        upper_bound(de.LaplaceDpEvent(1.0), delta=DELTA, relation="swap")
    with pytest.raises(DPAuditError, match="delta"):
        upper_bound(de.LaplaceDpEvent(1.0), delta=1.5)


def test_kary_randomized_response_composition_uses_self_composed_pld():
    rr = de.RandomizedResponseDpEvent(0.4, 3)
    looped = pld_privacy_accountant.PLDAccountant(NeighboringRelation.REPLACE_ONE)
    for _ in range(8):
        looped.compose(rr)
    bound = upper_bound(de.SelfComposedDpEvent(rr, 8), delta=DELTA)
    assert bound.method == "pld"
    assert abs(bound.epsilon - looped.get_epsilon(DELTA)) < PLD_SLACK


def test_composed_claims_use_the_optimal_composition_theorem():
    bound = upper_bound(de.SelfComposedDpEvent(EpsilonDeltaDpEvent(0.1, 0.0), 100), delta=DELTA)
    assert bound.method == "exact" and round(bound.epsilon, 3) == 4.307


def test_generic_poisson_subsampling():
    q = 0.1
    event = de.PoissonSampledDpEvent(q, EpsilonDeltaDpEvent(1.0, 0.0))
    add_remove = upper_bound(event, delta=0.0)
    assert add_remove.method == "subsampling"
    assert add_remove.epsilon == pytest.approx(math.log1p(q * math.expm1(1.0)))
    assert upper_bound(event, delta=0.0, relation="replace-one").epsilon == pytest.approx(1.0)
    assert upper_bound(event, delta=0.5).epsilon == 0.0


def test_unknown_inner_events_stay_unknown():
    for event in (GroupDpEvent(de.UnsupportedDpEvent(), 2), de.PoissonSampledDpEvent(0.1, de.UnsupportedDpEvent())):
        bound = upper_bound(event, delta=DELTA)
        assert math.isinf(bound.epsilon) and bound.method == "unknown"


def test_pure_compositions_at_delta_zero_add_up():
    from dp_accounting import dp_event as ev

    laplace = ev.LaplaceDpEvent(noise_multiplier=2.0)  # 0.5-DP
    composed = ev.ComposedDpEvent([ev.SelfComposedDpEvent(laplace, 4), ev.DiscreteLaplaceDpEvent(0.25, 1)])
    assert upper_bound(composed, delta=0.0).epsilon == pytest.approx(4 * 0.5 + 0.25)
    sampled = ev.PoissonSampledDpEvent(0.1, ev.SelfComposedDpEvent(laplace, 2))
    assert upper_bound(sampled, delta=0.0).epsilon == pytest.approx(math.log1p(0.1 * math.expm1(1.0)))
    # and at δ > 0 the PLD is below the pure sum
    assert upper_bound(composed, delta=1e-3).epsilon < 2.25


def test_a_pld_too_large_to_build_falls_back_to_the_pure_epsilon():
    from dp_accounting import dp_event

    event = dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(noise_multiplier=1e-300), 4)
    for delta in (0.0, 1e-5):
        assert upper_bound(event, delta=delta).epsilon == pytest.approx(4e300)


def test_discrete_laplace_doubles_under_replace_one_at_delta_zero_as_at_any_delta():
    from dp_accounting import dp_event

    event = dp_event.DiscreteLaplaceDpEvent(1.0, 1)
    for relation, factor in (("add-remove", 1.0), ("replace-one", 2.0)):
        assert upper_bound(event, delta=0.0, relation=relation).epsilon == pytest.approx(factor)
        assert upper_bound(event, delta=1e-12, relation=relation).epsilon == pytest.approx(factor, abs=1e-6)
