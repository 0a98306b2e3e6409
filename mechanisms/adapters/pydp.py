"""Adapters that audit Google's differential-privacy library through python-dp (optional extra `dpaudit[pydp]`).

python-dp 1.1.5 (`pip install python-dp`) wraps Google's C++ library. Its
numerical mechanisms draw "secure" noise: Laplace noise of scale b is a
two-sided geometric variable on the grid 2^⌈log2(b/2^40)⌉ and Gaussian noise
of deviation σ a scaled binomial on the grid 2^⌈log2(2σ/2^57)⌉ (both measured
by `python benchmarks/library_findings.py`), the query value rounded to the
grid first (Google, "Secure Noise Generation", differential-privacy/common_docs).
Each adapter's claim is the ε (and δ) passed to the library; its theory upper
bound comes from the noise the library reports it uses (`diversity`, `std`) or,
for the aggregations, the noise their documentation states, so a library whose
own accounting is loose or wrong shows it.

The library has no batched call and draws from its own generator: the
adapters loop in Python (2–4 µs a draw, BoundedMean about 18 µs;
`python benchmarks/library_speed.py`), the `rng` passed in is not used, and
an audit's seed does not reproduce the outputs (every draw is fresh, so
soundness is unaffected). For the same reason a replay cannot record or
replay its draws: each sampler says so (`CPP_NOISE`), and `audit_replay`
refuses it in one sentence. Registered only when `pydp` is installed; it is
imported when an adapter is built.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.builtins.floating_point import as_bits
from dpaudit.mechanisms.builtins.statistics import present_records
from dpaudit.mechanisms.neighbours import answers_within
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_real

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = [
    "build",
    "pydp_bounded_mean",
    "pydp_bounded_sum",
    "pydp_count",
    "pydp_gaussian",
    "pydp_gaussian_bits",
    "pydp_laplace",
    "pydp_laplace_bits",
    "pydp_laplace_half_sensitivity",
    "repeat",
]

GAUSSIAN_DELTA = 1e-5
CPP_NOISE = ("python-dp draws its noise in C++ (Google's differential-privacy library, from its own secure generator "
             "seeded by the operating system), which no random source dpaudit hands a mechanism reaches")
"""Why a python-dp release cannot be replayed: the `not_replayable` of its samplers (read by `dpaudit.attacks.replay`)."""


def build(owner: str, make: Callable[[], Any]) -> Any:
    """Return `make()`, or raise `InvalidParameterError` with python-dp's own reason when it refuses the parameters."""
    try:
        return make()
    except (RuntimeError, ValueError) as exc:
        raise InvalidParameterError(f"python-dp refused the parameters of {owner}: {str(exc).rstrip('.')}.") from None


def repeat(draw: Callable[[], float], size: int) -> np.ndarray:
    """Return `size` outputs of `draw()` as floats (python-dp has no batched call)."""
    return np.fromiter((draw() for _ in range(size)), dtype=float, count=size)


def _answer_mechanism(name: str, noise: Any, *, sensitivity: float, bits: bool, claim: Claim,
                      event: dp_event.DpEvent, params: dict, text: str) -> Mechanism:
    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        value = float(np.asarray(data, dtype=float).ravel()[0])
        out = repeat(lambda: noise.add_noise(value), size)
        return as_bits(out) if bits else out

    setattr(sample, "not_replayable", CPP_NOISE)
    return Mechanism(
        name=name, sampler=sample, claim=claim, event=event,
        default_pair=(np.array([0.0]), np.array([sensitivity])), neighbours=answers_within(sensitivity),
        params=params, description=text,
    )


def _laplace(name: str, epsilon: float, sensitivity: float, *, passed: float, bits: bool) -> Mechanism:
    from dp_accounting import dp_event
    from pydp.algorithms import numerical_mechanisms

    noise = build(name, lambda: numerical_mechanisms.LaplaceMechanism(epsilon=epsilon, sensitivity=passed))
    return _answer_mechanism(
        name, noise, sensitivity=sensitivity, bits=bits, claim=Claim(epsilon, 0.0),
        event=dp_event.LaplaceDpEvent(noise_multiplier=noise.diversity / sensitivity),
        params={"epsilon": epsilon, "sensitivity": sensitivity},
        text=f"python-dp LaplaceMechanism (scale {noise.diversity:g}) on a query of sensitivity {sensitivity:g}"
             + ("; output is the exact double." if bits else "."),
    )


def _gaussian(name: str, epsilon: float, delta: float, sensitivity: float, *, bits: bool) -> Mechanism:
    from dp_accounting import dp_event
    from pydp.algorithms import numerical_mechanisms

    noise = build(name, lambda: numerical_mechanisms.GaussianMechanism(epsilon=epsilon, delta=delta, sensitivity=sensitivity))
    event = dp_event.NonPrivateDpEvent() if bits else dp_event.GaussianDpEvent(noise_multiplier=noise.std / sensitivity)
    return _answer_mechanism(
        name, noise, sensitivity=sensitivity, bits=bits, claim=Claim(epsilon, delta), event=event,
        params={"epsilon": epsilon, "delta": delta, "sensitivity": sensitivity},
        text=f"python-dp GaussianMechanism (σ {noise.std:g}) on a query of ℓ2 sensitivity {sensitivity:g}"
             + ("; output is the exact double, whose low bits leak the input (docs/libraries.md, F1)." if bits else "."),
    )


def _check(epsilon: float, sensitivity: float, owner: str) -> tuple[float, float]:
    return (check_real(epsilon, "epsilon", owner, low=0.0, low_open=True),
            check_real(sensitivity, "sensitivity", owner, low=0.0, low_open=True))


def pydp_laplace(*, epsilon: float = 1.0, sensitivity: float = 1.0) -> Mechanism:
    """Return python-dp's `LaplaceMechanism(epsilon, sensitivity)` on a query answer; claim ε-DP.

    Upper bound: the Laplace profile at the library's own `diversity`
    (Δ/ε), which is ε at δ = 0. Sound for the library's discrete Laplace on
    its grid g: the geometric parameter gε/(Δ + g) allows for the rounding of
    the input to the grid (Google's cc/algorithms/distributions.cc), so the
    privacy loss is at most ε.
    """
    eps, sens = _check(epsilon, sensitivity, "pydp_laplace")
    return _laplace("pydp_laplace", eps, sens, passed=sens, bits=False)


def pydp_laplace_bits(*, epsilon: float = 1.0, sensitivity: float = 1.0) -> Mechanism:
    """Return `pydp_laplace` released as the exact double's IEEE-754 bits, as `naive_float_laplace` is audited.

    Mironov (CCS 2012) showed that the textbook sampler's low bits reveal the
    input; the library's grid is its defence.
    """
    eps, sens = _check(epsilon, sensitivity, "pydp_laplace_bits")
    return _laplace("pydp_laplace_bits", eps, sens, passed=sens, bits=True)


def pydp_laplace_half_sensitivity(*, epsilon: float = 1.0, sensitivity: float = 1.0) -> Mechanism:
    """BUGGY: `LaplaceMechanism(epsilon, sensitivity / 2)` on a query of sensitivity Δ; true ε = 2ε.

    A deliberately mis-parameterised call (the sensitivity passed as half the
    truth); the upper bound is the Laplace profile at scale Δ/(2ε).
    """
    eps, sens = _check(epsilon, sensitivity, "pydp_laplace_half_sensitivity")
    return _laplace("pydp_laplace_half_sensitivity", eps, sens, passed=sens / 2, bits=False)


def pydp_gaussian(*, epsilon: float = 1.0, delta: float = GAUSSIAN_DELTA, sensitivity: float = 1.0) -> Mechanism:
    """Return python-dp's `GaussianMechanism(epsilon, delta, sensitivity)` on a query answer; claim (ε, δ)-DP.

    Upper bound: the exact Gaussian profile (Balle & Wang 2018) at the
    library's own `std`, under the assumption that its binomial sampler is
    Gaussian (the library bounds the difference; Google, "Secure Noise Generation").
    """
    eps, sens = _check(epsilon, sensitivity, "pydp_gaussian")
    dlt = check_real(delta, "delta", "pydp_gaussian", low=0.0, low_open=True, high=1.0, high_open=True)
    return _gaussian("pydp_gaussian", eps, dlt, sens, bits=False)


def pydp_gaussian_bits(*, epsilon: float = 1.0, delta: float = GAUSSIAN_DELTA, sensitivity: float = 1.0) -> Mechanism:
    """FINDING (leaks): `pydp_gaussian` released as the exact double's IEEE-754 bits; not (ε, δ)-DP for δ < ~0.05.

    The library's Gaussian noise is m·g, m a binomial integer of spread
    about 2^56 and g = 2^⌈log2(2σ/2^57)⌉ (2^-54 at σ = 3.73): m does not fit
    a double's 53 bits and is rounded, so the low bits of the output depend
    on the input, as in Mironov (CCS 2012): at f(D) = 0 about 5% of outputs
    are odd multiples of 2^-54 in (−1/2, 1/2), which f(D) = 1 never releases
    (noise of magnitude ≥ 1/2 is a multiple of 2^-53). Upper bound: none (non-private event),
    as for `naive_float_laplace`. See docs/libraries.md.
    """
    eps, sens = _check(epsilon, sensitivity, "pydp_gaussian_bits")
    dlt = check_real(delta, "delta", "pydp_gaussian_bits", low=0.0, low_open=True, high=1.0, high_open=True)
    return _gaussian("pydp_gaussian_bits", eps, dlt, sens, bits=True)


def _aggregation(name: str, make: Callable[[], Any], *, low: float, high: float, pair: tuple[np.ndarray, np.ndarray],
                 epsilon: float, event: dp_event.DpEvent, params: dict, text: str) -> Mechanism:
    algorithm = build(name, make)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        records = np.asarray(data, dtype=float).ravel()
        present = [float(x) for x in records[~np.isnan(records)]]
        return repeat(lambda: algorithm.quick_result(present), size)

    setattr(sample, "not_replayable", CPP_NOISE)

    return Mechanism(
        name=name, sampler=sample, claim=Claim(epsilon, 0.0), event=event, default_pair=pair,
        neighbours=present_records(low, high), null_record=np.nan, params=params, description=text,
    )


def _one_added(present: float, added: float, n: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Return n − 1 records `present` and an absent record (nan), against the same with the record `added`."""
    d0 = np.full(n, present)
    d0[0] = np.nan
    d1 = d0.copy()
    d1[0] = added
    return d0, d1


def pydp_count(*, epsilon: float = 1.0) -> Mechanism:
    """Return python-dp's `Count(epsilon)` of the present records (nan = absent); claim ε-DP, add/remove.

    Documented sensitivity: one record changes the count by 1 (l0 = linf = 1),
    so the noise is Laplace(1/ε), rounded to an integer (post-processing).
    """
    from dp_accounting import dp_event
    from pydp.algorithms import laplacian

    eps = check_real(epsilon, "epsilon", "pydp_count", low=0.0, low_open=True)
    return _aggregation(
        "pydp_count", lambda: laplacian.Count(epsilon=eps, dtype="float"), low=-np.inf, high=np.inf,
        pair=_one_added(1.0, 1.0), epsilon=eps, event=dp_event.LaplaceDpEvent(noise_multiplier=1.0 / eps),
        params={"epsilon": eps}, text="python-dp Count (integer output).",
    )


def pydp_bounded_sum(*, epsilon: float = 1.0, lower: float = -2.0, upper: float = 1.0) -> Mechanism:
    """Return python-dp's `BoundedSum(epsilon, lower, upper)`; claim ε-DP, add/remove.

    The library clamps records to [lower, upper]; documented sensitivity
    max(|lower|, |upper|), so the noise is Laplace(max(|lower|, |upper|)/ε).
    Records may be any number; the worst case adds the bound of largest magnitude.
    """
    from dp_accounting import dp_event
    from pydp.algorithms import laplacian

    eps = check_real(epsilon, "epsilon", "pydp_bounded_sum", low=0.0, low_open=True)
    lo = check_real(lower, "lower", "pydp_bounded_sum")
    hi = check_real(upper, "upper", "pydp_bounded_sum", low=lo, low_open=True)
    extreme = lo if abs(lo) > abs(hi) else hi
    return _aggregation(
        "pydp_bounded_sum",
        lambda: laplacian.BoundedSum(epsilon=eps, lower_bound=lo, upper_bound=hi, dtype="float"),
        low=-np.inf, high=np.inf, pair=_one_added((lo + hi) / 2, extreme), epsilon=eps,
        event=dp_event.LaplaceDpEvent(noise_multiplier=1.0 / eps),
        params={"epsilon": eps, "lower": lo, "upper": hi}, text="python-dp BoundedSum.",
    )


def pydp_bounded_mean(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0) -> Mechanism:
    """Return python-dp's `BoundedMean(epsilon, lower, upper)`; claim ε-DP, add/remove.

    Google's algorithm (cc/algorithms/bounded-mean.h; Li et al., "Differential
    Privacy: From Theory to Practice", Alg. 2.4): half of ε to a noisy count
    (Laplace(2/ε)), half to the sum of x − midpoint (sensitivity
    (upper − lower)/2, Laplace((upper − lower)/ε)); releases
    clamp(midpoint + noisy sum / max(1, noisy count)). Upper bound: the two
    Laplace releases composed. Worst case: one record at `upper` added to a
    small dataset at `lower`.
    """
    from dp_accounting import dp_event
    from pydp.algorithms import laplacian

    eps = check_real(epsilon, "epsilon", "pydp_bounded_mean", low=0.0, low_open=True)
    lo = check_real(lower, "lower", "pydp_bounded_mean")
    hi = check_real(upper, "upper", "pydp_bounded_mean", low=lo, low_open=True)
    half = dp_event.LaplaceDpEvent(noise_multiplier=2.0 / eps)
    return _aggregation(
        "pydp_bounded_mean",
        lambda: laplacian.BoundedMean(epsilon=eps, lower_bound=lo, upper_bound=hi, dtype="float"),
        low=-np.inf, high=np.inf, pair=_one_added(lo, hi, n=2), epsilon=eps,
        event=dp_event.ComposedDpEvent([half, half]),
        params={"epsilon": eps, "lower": lo, "upper": hi}, text="python-dp BoundedMean.",
    )


if importlib.util.find_spec("pydp") is not None:
    # python-dp has no batched call: a Python loop at 2–4 µs a draw (BoundedMean 18 µs), so a smaller suite budget.
    for _factory, _expected, _cost in (
        (pydp_laplace, "consistent", 0.3), (pydp_laplace_bits, "consistent", 0.3),
        (pydp_laplace_half_sensitivity, "violation", 0.3), (pydp_gaussian, "consistent", 0.3),
        (pydp_gaussian_bits, "violation", 0.3), (pydp_count, "consistent", 0.3), (pydp_bounded_sum, "consistent", 0.3),
        (pydp_bounded_mean, "consistent", 0.1),
    ):
        register(_factory.__name__, expected=_expected, suite_trials=_cost)(_factory)
