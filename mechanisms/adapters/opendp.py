"""Adapters that audit OpenDP measurements (optional extra: registered only when `opendp` is installed).

OpenDP (opendp.org, v0.16) samples noise exactly; its measurements state
their own privacy map, so each adapter's claim is OpenDP's `map(d_in)`.
Batching: one call draws many outputs by applying OpenDP's vector-domain
version of the same noise measurement to `size` copies of the query value
(each coordinate gets independent noise from the same sampler); the query
itself (e.g. `make_sum`) is OpenDP's own transformation, run once per call.
OpenDP draws from its own cryptographic RNG, so the `rng` passed in is not
used and an audit's seed does not reproduce these outputs (soundness is
unaffected: every draw is fresh). For the same reason a replay cannot
record or replay its draws: each sampler says so (`RUST_NOISE`), and
`audit_replay` refuses it in one sentence. OpenDP takes seconds to import,
so it is imported, and its "contrib" features enabled, when an adapter is
first built.
"""

from __future__ import annotations

import functools
import importlib.util
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.builtins.laplace import sum_pair
from dpaudit.mechanisms.neighbours import answers_within, by_relation, records_in
from dpaudit.mechanisms.records import NumberRecords
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = ["opendp_composed", "opendp_discrete_laplace", "opendp_gaussian", "opendp_laplace", "opendp_mean", "opendp_quantile",
           "opendp_sum", "opendp_sum_of_squared_deviations", "opendp_variance"]

GAUSSIAN_DELTA = 1e-5


RUST_NOISE = ("OpenDP draws its noise in Rust, from the operating system's entropy, which no random source dpaudit "
              "hands a mechanism reaches")
"""Why an OpenDP release cannot be replayed: the `not_replayable` of its samplers (read by `dpaudit.attacks.replay`)."""


def in_rust(sample: Callable[..., np.ndarray], why: str = RUST_NOISE) -> Callable[..., np.ndarray]:
    """Return `sample`, marked as drawing its noise where a replay cannot reach (`not_replayable`: `why`)."""
    setattr(sample, "not_replayable", why)
    return sample


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
        name=name, sampler=in_rust(sample), claim=claim, event=event,
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
        name=name, sampler=in_rust(sample), claim=Claim(eps, 0.0), event=event,
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


# ---- transformations chained with a measurement, as OpenDP's docs show them


def _chain(query: str, lower: float, upper: float, size: int) -> Callable[[float], Any]:
    """Return scale ↦ OpenDP's chain of `query` with Laplace noise at that scale, over float vectors of any length.

    `(vector_domain(atom_domain(T=float, nan=False)), symmetric_distance()) >> then_clamp((lower, upper))`,
    then for "sum" `then_sum()`; for "mean", "variance" and "sum_of_squared_deviations"
    `then_resize(size=size, constant=(lower + upper) / 2)` and `then_mean()`, `then_variance()` or
    `then_sum_of_squared_deviations()`; then `then_laplace(scale)`.
    """
    dp = _opendp()
    chain = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()) >> dp.t.then_clamp((lower, upper))
    if query != "sum":
        chain = chain >> dp.t.then_resize(size=size, constant=(lower + upper) / 2)
    chain = chain >> getattr(dp.t, f"then_{query}")()
    return lambda scale: chain >> dp.m.then_laplace(scale)


def _records_mechanism(name: str, measurement: Any, pair: tuple[np.ndarray, np.ndarray], params: dict, text: str,
                       event: dp_event.DpEvent | None = None) -> Mechanism:
    """Return `measurement` (OpenDP, on float vectors of any length) called once per output on the present records.

    Claim: `measurement.map(1)` (one record added or removed: symmetric distance 1). A dataset is an
    array of records, NaN for an absent one (dropped before OpenDP sees the data). Every output is
    one call of the chain as a user makes it (no batching: `then_resize` draws its own randomness).
    Upper bound: `event`, dpaudit's own analysis where it has one, else the claim.
    """
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps = float(measurement.map(1))

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        values = np.asarray(data, dtype=float).ravel()
        rows = [float(x) for x in values[~np.isnan(values)]]
        return np.array([measurement(rows) for _ in range(size)], dtype=float)

    return Mechanism(
        name=name, sampler=in_rust(sample), claim=Claim(eps, 0.0), event=event or EpsilonDeltaDpEvent(eps),
        default_pair=pair, neighbours=by_relation("add-remove", null_record=np.nan, records=NumberRecords()),
        null_record=np.nan, params=params, description=text,
    )


def _bounded(owner: str, epsilon: float, lower: float, upper: float, size: int) -> tuple[float, float, float, int]:
    eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)
    lo = check_real(lower, "lower", owner)
    return eps, lo, check_real(upper, "upper", owner, low=lo, low_open=True), check_int(size, "size", owner, low=1)


def _laplace_chain(name: str, query: str, epsilon: float, lower: float, upper: float, size: int) -> Mechanism:
    """Return the chain of `query` at the scale OpenDP's `binary_search_param` finds for ε at d_in = 1 (as its docs do).

    Default pair, the same for every query: `size` records at the bound nearer 0 against the same with a
    record at the other bound added (for a sum, a record at the bound of largest magnitude added to
    records at the midpoint). No knowledge of any one bug went into it. The sum's upper bound is
    dpaudit's: Laplace at sensitivity max(|lower|, |upper|) on real numbers (OpenDP's own map uses
    upper − lower where the bounds straddle 0: sound, not tight).
    """
    from dp_accounting import dp_event

    eps, lo, hi, n = _bounded(name, epsilon, lower, upper, size)
    make = _chain(query, lo, hi, n)
    scale = float(_opendp().binary_search_param(make, d_in=1, d_out=eps))
    near, far = (lo, hi) if abs(lo) <= abs(hi) else (hi, lo)
    base = np.full(n, (lo + hi) / 2 if query == "sum" else near)
    pair = (np.append(base, np.nan), np.append(base, far))
    params = {"epsilon": eps, "lower": lo, "upper": hi, "size": n, "scale": scale}
    steps = "then_clamp >> " + ("" if query == "sum" else f"then_resize(size={n}) >> ") + f"then_{query} >> then_laplace"
    event = dp_event.LaplaceDpEvent(noise_multiplier=scale / max(abs(lo), abs(hi))) if query == "sum" else None
    return _records_mechanism(name, make(scale), pair, params, f"OpenDP {steps}(scale {scale:.6g}), bounds [{lo:g}, {hi:g}].",
                              event)


def opendp_sum(*, epsilon: float = 1.0, lower: float = -2.0, upper: float = 1.0, size: int = 10) -> Mechanism:
    """Return OpenDP's `then_clamp >> then_sum >> then_laplace` on floats; claim the chain's `map(1)` (OpenDP's float-sum sensitivity)."""
    return _laplace_chain("opendp_sum", "sum", epsilon, lower, upper, size)


def opendp_mean(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0, size: int = 10) -> Mechanism:
    """Return OpenDP's `then_clamp >> then_resize >> then_mean >> then_laplace`; claim the chain's `map(1)`."""
    return _laplace_chain("opendp_mean", "mean", epsilon, lower, upper, size)


def opendp_variance(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0, size: int = 10) -> Mechanism:
    """Return OpenDP's `then_clamp >> then_resize >> then_variance >> then_laplace`; claim the chain's `map(1)`."""
    return _laplace_chain("opendp_variance", "variance", epsilon, lower, upper, size)


def opendp_sum_of_squared_deviations(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0,
                                     size: int = 10) -> Mechanism:
    """Return OpenDP's `then_clamp >> then_resize >> then_sum_of_squared_deviations >> then_laplace`; claim `map(1)`."""
    return _laplace_chain("opendp_sum_of_squared_deviations", "sum_of_squared_deviations", epsilon, lower, upper, size)


def opendp_quantile(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0, alpha: float = 0.5,
                    candidates: int = 21, size: int = 10) -> Mechanism:
    """Return OpenDP's `then_clamp >> then_private_quantile` (max divergence) over evenly spaced candidates in the bounds.

    The scale is OpenDP's `binary_search_param` for ε at d_in = 1; the claim the chain's `map(1)`.
    Default pair: `size` records at the lower bound against the same with a record at the upper bound added.
    """
    dp = _opendp()
    eps, lo, hi, n = _bounded("opendp_quantile", epsilon, lower, upper, size)
    alpha = check_real(alpha, "alpha", "opendp_quantile", low=0.0, high=1.0)
    grid = [float(c) for c in np.linspace(lo, hi, check_int(candidates, "candidates", "opendp_quantile", low=2))]
    space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()) >> dp.t.then_clamp((lo, hi))

    def make(scale: float) -> Any:
        return space >> dp.m.then_private_quantile(dp.max_divergence(), candidates=grid, alpha=alpha, scale=scale)

    scale = float(dp.binary_search_param(make, d_in=1, d_out=eps))
    base = np.full(n, lo)
    params = {"epsilon": eps, "lower": lo, "upper": hi, "alpha": alpha, "candidates": len(grid), "size": n, "scale": scale}
    return _records_mechanism("opendp_quantile", make(scale), (np.append(base, np.nan), np.append(base, hi)), params,
                              f"OpenDP then_clamp >> then_private_quantile(alpha {alpha:g}, scale {scale:.6g}), {len(grid)} candidates.")


if importlib.util.find_spec("opendp") is not None:
    # OpenDP samples exactly with big rationals (15–100 µs per draw): fewer suite trials keep the quick suite short.
    for _name, _factory, _cost in (("opendp_laplace", opendp_laplace, 0.05), ("opendp_gaussian", opendp_gaussian, 0.03),
                                   ("opendp_discrete_laplace", opendp_discrete_laplace, 0.1),
                                   ("opendp_composed", opendp_composed, 0.05)):
        register(_name, expected="consistent", suite_trials=_cost)(_factory)
    # One chain call per output (then_resize draws its own randomness): 0.5–0.8 ms each at 10 records.
    for _name, _factory in (("opendp_sum", opendp_sum), ("opendp_mean", opendp_mean), ("opendp_variance", opendp_variance),
                            ("opendp_sum_of_squared_deviations", opendp_sum_of_squared_deviations),
                            ("opendp_quantile", opendp_quantile)):
        register(_name, expected="consistent", suite_trials=0.01)(_factory)
