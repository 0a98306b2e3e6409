"""python-dp adapters: claims and upper bounds from the library's own parameters, correct ones not flagged, wrong ones flagged.

python-dp draws from its own unseeded generator, so a test's outputs differ
between runs; the audits of correct mechanisms use confidence 0.999, so that
each flags a correct mechanism with probability at most 0.001 whatever the draws.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pydp")

from dpaudit.audit.audits.two_dataset import audit_mechanism  # noqa: E402
from dpaudit.mechanisms import InvalidParameterError, get_mechanism  # noqa: E402
from dpaudit.mechanisms.builtins.floating_point import from_bits  # noqa: E402
from dpaudit.mechanisms.builtins.gaussian import analytic_sigma  # noqa: E402
from dpaudit.mechanisms.registry import registration

CORRECT = ["pydp_laplace", "pydp_laplace_bits", "pydp_gaussian", "pydp_count", "pydp_bounded_sum", "pydp_bounded_mean"]


@pytest.mark.parametrize("name", CORRECT)
@pytest.mark.parametrize("seed", [0, 1])
def test_correct_mechanism_is_not_flagged(name: str, seed: int) -> None:
    result = audit_mechanism(get_mechanism(name), trials=20_000, seed=seed, confidence=0.999)
    assert result.verdict == "consistent"


def test_half_sensitivity_is_flagged_near_its_true_epsilon() -> None:
    mech = get_mechanism("pydp_laplace_half_sensitivity", epsilon=1.0)
    assert registration(mech.name).expected == "violation" and mech.claim.epsilon == 1.0
    result = audit_mechanism(mech, trials=20_000, seed=0, confidence=0.999)
    assert result.verdict == "violation"
    assert result.upper_bound.epsilon == pytest.approx(2.0)
    assert result.lower_bound.epsilon <= result.upper_bound.epsilon


def test_gaussian_low_bits_leak_is_flagged() -> None:
    result = audit_mechanism(get_mechanism("pydp_gaussian_bits"), trials=20_000, seed=0, confidence=0.999)
    assert result.verdict == "violation"


def test_gaussian_bits_differ_in_support() -> None:
    """At f(D) = 0 about 5% of outputs are odd multiples of 2^-54 in (−1/2, 1/2); at f(D) = 1 none can be."""
    mech = get_mechanism("pydp_gaussian_bits")
    rng = np.random.default_rng(0)
    odd = []
    for value in (0.0, 1.0):
        out = from_bits(mech.sample(np.array([value]), 20_000, rng))
        small = out[np.abs(out) < 0.5]
        odd.append(int(np.sum(np.mod(small, 2.0**-53) != 0)))
    # about 1,000 expected on f(D) = 0 (P = 0.053); fewer than 500 has probability below 1e-50.
    assert odd[0] > 500 and odd[1] == 0


def test_laplace_outputs_lie_on_the_library_grid() -> None:
    """python-dp's Laplace releases multiples of 2^-40 at scale 1: the defence against Mironov's attack."""
    out = from_bits(get_mechanism("pydp_laplace_bits").sample(np.array([1.0]), 20_000, np.random.default_rng(0)))
    assert np.all(np.mod(out, 2.0**-40) == 0)


def test_upper_bounds_follow_the_library_noise() -> None:
    gauss = get_mechanism("pydp_gaussian", epsilon=1.0, delta=1e-5)
    assert gauss.claim.epsilon == 1.0 and gauss.claim.delta == 1e-5
    # The library's σ (its `std`), no smaller than the analytic σ of Balle and Wang, and close to it.
    assert 1.0 <= gauss.event.noise_multiplier / analytic_sigma(1.0, 1e-5) < 1.01
    assert get_mechanism("pydp_laplace", epsilon=0.5, sensitivity=2.0).event.noise_multiplier == pytest.approx(2.0)


def test_aggregations_release_their_statistic() -> None:
    rng = np.random.default_rng(0)
    count = get_mechanism("pydp_count").sample(np.array([1.0, np.nan, 3.0]), 4_000, rng)
    assert np.all(count == np.round(count)) and abs(np.mean(count) - 2.0) < 0.15  # Laplace(1) sd 1.41: 6.7 s.e.
    mean = get_mechanism("pydp_bounded_mean", lower=0.0, upper=1.0).sample(np.array([0.0, 1.0]), 4_000, rng)
    assert mean.min() >= 0.0 and mean.max() <= 1.0


def test_non_neighbours_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="not neighbours"):
        audit_mechanism(get_mechanism("pydp_count"), np.array([np.nan, np.nan]), np.array([1.0, 1.0]), trials=100)


@pytest.mark.parametrize("name, params, match", [
    ("pydp_gaussian", {"delta": 0.0}, "'delta' parameter of pydp_gaussian"),
    ("pydp_bounded_mean", {"epsilon": 1e-300}, "python-dp refused the parameters of pydp_bounded_mean: .*2\\^-50"),
    ("pydp_bounded_sum", {"lower": 2.0, "upper": 1.0}, "'upper' parameter of pydp_bounded_sum"),
])
def test_bad_parameters_fail_in_one_sentence(name: str, params: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        get_mechanism(name, **params)


@pytest.mark.parametrize("name", ["pydp_laplace", "pydp_gaussian_bits", "pydp_count", "pydp_bounded_mean"])
def test_a_replay_is_refused_in_one_sentence_that_names_the_c_plus_plus_noise(name: str) -> None:
    from dpaudit.attacks.replay import NotReplayable
    from dpaudit.audit import audit_replay

    with pytest.raises(NotReplayable, match=rf"^Mechanism '{name}' cannot be replayed: python-dp draws its noise in C\+\+[^.]*\.$"):
        audit_replay(get_mechanism(name))
