"""Laplace noise in floating point: the naive textbook sampler and Mironov's snapping mechanism.

Mironov, "On Significance of the Least Significant Bits for Differential
Privacy", CCS 2012. Both release the exact double they compute, as its
IEEE-754 bit pattern (uint64): the threat model in which the low bits are
seen. (`dpaudit.mechanisms.builtins.laplace` releases a real number: ideal arithmetic.)
"""

from __future__ import annotations

import math

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.builtins.laplace import sum_pair
from dpaudit.mechanisms.neighbours import records_in
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_real

__all__ = ["as_bits", "from_bits", "full_precision_uniform", "naive_float_laplace", "snapping"]

MANTISSA = 2.0**52


def as_bits(values: np.ndarray) -> np.ndarray:
    """Return float64 values as their IEEE-754 bit patterns (uint64)."""
    return np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)


def from_bits(bits: np.ndarray) -> np.ndarray:
    """Return the doubles whose IEEE-754 bit patterns are `bits`."""
    return np.ascontiguousarray(bits, dtype=np.uint64).view(np.float64)


def full_precision_uniform(size: int, rng: np.random.Generator) -> np.ndarray:
    """Return doubles in (0, 1) drawn as a real uniform rounded down: exponent ~ Geometric(1/2), 52 mantissa bits.

    Every double in (0, 1) is reachable, with probability its width (Mironov §5.2).
    """
    exponent = rng.geometric(0.5, size)
    mantissa = rng.integers(0, 2**52, size, dtype=np.int64)
    return np.ldexp(1.0 + mantissa / MANTISSA, -exponent)


def _snap(values: np.ndarray, lam: float, bound: float) -> np.ndarray:
    """Return values rounded to the nearest multiple of Λ = 2^⌈log2 λ⌉, then clamped to [−B, B]."""
    big_lambda = 2.0 ** math.ceil(math.log2(lam))
    return np.clip(np.round(values / big_lambda) * big_lambda, -bound, bound)


def _snapping_epsilon(lam: float, bound: float) -> float:
    """Return the ε of the snapping mechanism for a sensitivity-1 query: 1/λ + 2^−49 B/λ (Mironov Thm 1)."""
    return (1.0 + 2.0**-49 * bound) / lam


@register("naive_float_laplace", expected="violation")
def naive_float_laplace(*, epsilon: float = 1.0) -> Mechanism:
    """BUGGY: sum + numpy's Laplace(1/ε) computed in doubles, released exactly; true ε = ∞.

    The textbook sampler (loc ± b·ln(2U), U a 53-bit uniform) reaches
    different sets of doubles around f(D) = 0 and f(D) = 1, so some outputs
    occur under one dataset only (Mironov CCS 2012, §4; DP-Sniper finds
    0.252 at ε = 0.1). Records in [0, 1].
    """
    from dp_accounting import dp_event

    eps = check_real(epsilon, "epsilon", "naive_float_laplace", low=0.0, low_open=True)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return as_bits(np.sum(data) + rng.laplace(0.0, 1.0 / eps, size))

    return Mechanism(
        name="naive_float_laplace",
        sampler=sample,
        claim=Claim(eps, 0.0),
        event=dp_event.NonPrivateDpEvent(),
        default_pair=sum_pair(1.0),
        neighbours=records_in(0.0, 1.0),
        null_record=0.0,
        params={"epsilon": eps},
        description="Naive floating-point Laplace; output is the exact double (true ε = ∞).",
    )


@register("snapping", expected="consistent")
def snapping(*, epsilon: float = 1.0, bound: float = 100.0) -> Mechanism:
    """Return clamp_B(round_Λ(clamp_B(sum) + S·λ·ln U)) with λ = 1/ε, released exactly.

    Mironov CCS 2012, §5.2, Thm 1: (1/λ + 2^−49 B/λ)-DP for a sensitivity-1
    query when λ < B < 2^46 λ, assuming a correctly rounded logarithm
    (numpy's `log` is faithful to within an ulp, not proven correctly rounded).
    Records in [0, 1].
    """
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps = check_real(epsilon, "epsilon", "snapping", low=0.0, low_open=True)
    lam = 1.0 / eps
    b = check_real(bound, "bound", "snapping", low=lam, low_open=True, high=2.0**46 * lam, high_open=True)
    claimed = _snapping_epsilon(lam, b)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        sign = rng.choice(np.array([-1.0, 1.0]), size)
        noisy = np.clip(np.sum(data), -b, b) + sign * lam * np.log(full_precision_uniform(size, rng))
        return as_bits(_snap(noisy, lam, b))

    return Mechanism(
        name="snapping",
        sampler=sample,
        claim=Claim(claimed, 0.0),
        event=EpsilonDeltaDpEvent(claimed, 0.0),
        default_pair=sum_pair(1.0),
        neighbours=records_in(0.0, 1.0),
        null_record=0.0,
        params={"epsilon": eps, "bound": b},
        description="Mironov's snapping mechanism; output is the exact double.",
    )
