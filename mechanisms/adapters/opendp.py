"""Adapters that audit OpenDP measurements (optional extra: registered only when `opendp` is installed).

OpenDP (opendp.org, v0.16) samples noise exactly; its measurements state
their own privacy map, so each adapter's claim is OpenDP's `map(d_in)`.
Batching: one call draws many outputs by applying OpenDP's vector-domain
version of the same noise measurement to `size` copies of the query value
(each coordinate gets independent noise from the same sampler); the query
itself (e.g. `make_sum`) is OpenDP's own transformation, run once per call.
OpenDP draws from its own cryptographic RNG, so the `rng` passed in is not
used and an audit's seed does not reproduce these outputs (soundness is
unaffected: every draw is fresh). OpenDP takes seconds to import, so it is
imported, and its "contrib" features enabled, when an adapter is first built.
"""

from __future__ import annotations

import functools
import importlib.util
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.builtins.laplace import sum_pair
from dpaudit.mechanisms.neighbours import answers_within, records_in
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_real

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = ["opendp_composed", "opendp_discrete_laplace", "opendp_gaussian", "opendp_laplace"]

GAUSSIAN_DELTA = 1e-5


@functools.cache
def _opendp() -> Any:
    """Return `opendp.prelude` with OpenDP's "contrib" features enabled."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


@functools.lru_cache(maxsize=64)
def _vector_noise(kind: str, scale: float, size: int, integer: bool) -> Any:
    """Return OpenDP's `make_laplace`/`make_gaussian` on a vector domain of `size` (cached per size)."""
    dp = _opendp()
    atom = dp.atom_domain(T=int) if integer else dp.atom_domain(T=float, nan=False)
    metric = (dp.l1_distance if kind == "laplace" else dp.l2_distance)(T=int if integer else float)
    make = dp.m.make_laplace if kind == "laplace" else dp.m.make_gaussian
    return make(dp.vector_domain(atom, size=size), metric, scale=scale)


def _noisy_copies(kind: str, scale: float, integer: bool) -> Callable[[Any, int], np.ndarray]:
    def draw(value: Any, size: int) -> np.ndarray:
        return np.asarray(_vector_noise(kind, scale, size, integer)([value] * size))

    return draw


def _bounded_sum() -> Any:
    dp = _opendp()
    return dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(0, 1))), dp.symmetric_distance())


def _scalar(kind: str, scale: float) -> Any:
    dp = _opendp()
    make = dp.m.make_laplace if kind == "laplace" else dp.m.make_gaussian
    return make(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=scale)


def _answer_mechanism(name: str, kind: str, scale: float, claim: Claim, event: dp_event.DpEvent) -> Mechanism:
    draw = _noisy_copies(kind, scale, integer=False)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return draw(float(np.asarray(data, dtype=float).ravel()[0]), size)

    return Mechanism(
        name=name, sampler=sample, claim=claim, event=event,
        default_pair=(np.array([0.0]), np.array([1.0])), neighbours=answers_within(1.0),
        params={"scale": scale},
        description=f"OpenDP make_{kind} on a query of sensitivity 1 (OpenDP samples with its own RNG).",
    )


def opendp_laplace(*, scale: float = 1.0) -> Mechanism:
    """Return OpenDP's `make_laplace` on a float query of sensitivity 1; claim ε = `map(1.0)` (= 1/scale)."""
    from dp_accounting import dp_event

    scale = check_real(scale, "scale", "opendp_laplace", low=0.0, low_open=True)
    eps = float(_scalar("laplace", scale).map(1.0))
    return _answer_mechanism("opendp_laplace", "laplace", scale, Claim(eps, 0.0),
                             dp_event.LaplaceDpEvent(noise_multiplier=scale))


def opendp_gaussian(*, scale: float = 4.0) -> Mechanism:
    """Return OpenDP's `make_gaussian` on a float query of sensitivity 1.

    OpenDP states ρ-zCDP; the claim is OpenDP's own conversion
    (`make_zCDP_to_approxDP`) at δ = 1e-5 (Canonne, Kamath, Steinke 2020).
    """
    from dp_accounting import dp_event

    dp = _opendp()
    scale = check_real(scale, "scale", "opendp_gaussian", low=0.0, low_open=True)
    profile = dp.c.make_zCDP_to_approxDP(_scalar("gaussian", scale)).map(1.0)
    eps = float(profile.epsilon(delta=GAUSSIAN_DELTA))
    return _answer_mechanism("opendp_gaussian", "gaussian", scale, Claim(eps, GAUSSIAN_DELTA),
                             dp_event.GaussianDpEvent(noise_multiplier=scale))


def _count_mechanism(name: str, measurement: Any, draws: list[Callable[[Any, int], np.ndarray]],
                     event: dp_event.DpEvent, params: dict, text: str) -> Mechanism:
    query = _bounded_sum()
    eps = float(measurement.map(1))

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        value = query([int(x) for x in np.asarray(data).ravel()])
        outs = [draw(value, size) for draw in draws]
        return outs[0] if len(outs) == 1 else np.column_stack(outs)

    d0, d1 = sum_pair(1)
    return Mechanism(
        name=name, sampler=sample, claim=Claim(eps, 0.0), event=event,
        default_pair=(d0.astype(int), d1.astype(int)), neighbours=records_in(0, 1, integer=True), null_record=0,
        params=params, description=text,
    )


def opendp_discrete_laplace(*, scale: float = 1.0) -> Mechanism:
    """Return OpenDP's `make_sum` of 0/1 records >> `make_laplace` on integers (discrete Laplace, "geometric").

    Claim: the chain's `map(1)` under the symmetric distance (add/remove) = 1/scale.
    """
    from dp_accounting import dp_event

    dp = _opendp()
    scale = check_real(scale, "scale", "opendp_discrete_laplace", low=0.0, low_open=True)
    chain = _bounded_sum() >> dp.m.then_laplace(scale=scale)
    return _count_mechanism(
        "opendp_discrete_laplace", chain, [_noisy_copies("laplace", scale, integer=True)],
        dp_event.DiscreteLaplaceDpEvent(noise_parameter=1.0 / scale, sensitivity=1), {"scale": scale},
        "OpenDP bounded sum with discrete Laplace noise.",
    )


def opendp_composed(*, scales: tuple[float, float] = (2.0, 2.0)) -> Mechanism:
    """Return OpenDP's `make_composition` of two discrete-Laplace releases of one bounded sum.

    Claim: the composition's `map(1)` (basic composition, Σ 1/scale_i).
    Output: both releases.
    """
    from dp_accounting import dp_event

    dp = _opendp()
    scales = tuple(check_real(s, "scales", "opendp_composed", low=0.0, low_open=True) for s in scales)
    parts = [_bounded_sum() >> dp.m.then_laplace(scale=s) for s in scales]
    composed = dp.c.make_composition(parts)
    return _count_mechanism(
        "opendp_composed", composed, [_noisy_copies("laplace", s, integer=True) for s in scales],
        dp_event.ComposedDpEvent([dp_event.DiscreteLaplaceDpEvent(1.0 / s, 1) for s in scales]),
        {"scales": list(scales)}, "OpenDP composition of two discrete-Laplace bounded sums.",
    )


if importlib.util.find_spec("opendp") is not None:
    # OpenDP samples exactly with big rationals (15–100 µs per draw): fewer suite trials keep the quick suite short.
    for _name, _factory, _cost in (("opendp_laplace", opendp_laplace, 0.05), ("opendp_gaussian", opendp_gaussian, 0.03),
                                   ("opendp_discrete_laplace", opendp_discrete_laplace, 0.1),
                                   ("opendp_composed", opendp_composed, 0.05)):
        register(_name, expected="consistent", suite_trials=_cost)(_factory)
