"""Adapters that audit Tumult Core measurements in Tumult's own environment (registered only when it exists).

Tumult Core (tmlt.core 0.20) pins numpy 1.26.4 and pandas 1.5.3 and brings
pyspark 3.5, so it cannot share dpaudit's environment: it has a declared
library environment of its own, `tumult-core` (mechanisms/environments.py;
`dpaudit env create tumult-core`, or `make tumult`, builds it; Spark needs
Java, which the build checks), and these adapters run Tumult there as a black
box (`external_python`), through `tumult_side.py` (which see). The
interpreter is $DPAUDIT_TUMULT_PYTHON when that is set (and nothing is
registered if it names no runnable file), else the `tumult-core`
environment's once it is built; the adapters are registered only then, and
never build it themselves (a build of several minutes that needs Java is
asked for by name). Registering runs nothing; building a
mechanism asks Tumult for its claim (a process of 2–3 s, 13 s for the
grouped count, which starts Spark; cached per process).

Each adapter's **claim** is Tumult's own privacy function at d_in = 1
(PureDP: ε; RhoZCDP: ρ, and the ε Tumult's `RhoZCDPToApproxDP` accepts at
δ = 1e-5). Its **upper bound** is computed by dpaudit from the noise
parameter Tumult reports it calibrated and the query's sensitivity (a
clipped sum's max(|lower|, |upper|)), so a wrong calibration shows. The
relation: Tumult's SymmetricDifference of 1, one row added or removed
(`nan` marks an absent row here); the noise measurements on a number take
answers at AbsoluteDifference 1 (the pair 0 against 1).

Tumult Core samples exactly (inverse-CDF with arbitrary precision, or
rational arithmetic), one draw at a time: 50–70 µs a draw on a number,
0.2–0.45 ms an output for the Spark aggregations once Spark runs
(measured in docs/libraries.md). The draws of every
Tumult mechanism go to one long-lived process per interpreter
(`tumult_side:serve`), so Spark starts once a run (20–25 s, on the
first batch of an aggregation). Tumult's generator has no public seed, so the
`rng` only picks the seed sent to the process, which Tumult cannot use: an
audit does not repeat bit for bit (soundness is unaffected: every draw is
fresh), as for the python-dp adapters.

Replay (`Requests.replay`, `dpaudit replay tumult_laplace`): Tumult Core's
one interception point is its generator, `tmlt.core.random.rng.prng()`,
which the side points at a recording state for the run (`tumult_side.replay`):
the measurements on a number (`tumult_laplace`, `tumult_gaussian` and
their `_bits`) are recorded and replayed there. The aggregations draw in
Spark's workers, which that point does not reach: they declare
`not_replayable` (`SPARK_NOISE`), and `audit_replay` refuses them in one
sentence.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms.base import Mechanism, Relation
from dpaudit.mechanisms.builtins.floating_point import as_bits
from dpaudit.mechanisms.builtins.statistics import present_records
from dpaudit.mechanisms.environments import Environment, declare, environment_exists
from dpaudit.mechanisms.environments import environment_python as built_python
from dpaudit.mechanisms.external.processes import ExternalProcess, SideRequests, external_python, side_process
from dpaudit.mechanisms.neighbours import NeighbourCheck, answers_within
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = [
    "ENVIRONMENT",
    "ENVIRONMENT_VARIABLE",
    "Requests",
    "absent",
    "registered_environment",
    "interpreter",
    "one_row_added",
    "tumult_gaussian",
    "tumult_gaussian_bits",
    "tumult_gaussian_count",
    "tumult_gaussian_sum",
    "tumult_gaussian_sum_bits",
    "tumult_geometric_count",
    "tumult_grouped_count",
    "tumult_laplace",
    "tumult_laplace_bits",
    "tumult_laplace_sum",
    "tumult_python",
]

ENVIRONMENT_VARIABLE = "DPAUDIT_TUMULT_PYTHON"
ENVIRONMENT = declare(Environment(
    name="tumult-core",
    packages=("tmlt.core==0.20.*",),  # with numpy 1.26.4, pandas 1.5.3, pyspark 3.5
    python="3.11",
    description="Tumult Core 0.20 (the tumult_* adapters); Spark, which needs Java",
    check="import tmlt.core",
    needs=("java",),
))
GAUSSIAN_DELTA = 1e-5
SIDE = Path(__file__).resolve().parents[1] / "scripts" / "tumult_side.py"
DESCRIBE_TIMEOUT = 300.0  # seconds for Tumult to state its claim (importing Tumult Core; Spark for grouped counts)
BATCH_TIMEOUT = 1800.0  # seconds for one batch: up to 250,000 outputs at up to ~0.7 ms each, Spark's start-up included
REPLAYED = ("laplace", "gaussian")
"""The kinds a replay reaches (`tumult_side.REPLAYED`): measurements on a number, drawn in the process dpaudit talks to."""
SPARK_NOISE = ("Tumult adds the noise of a Spark query in Spark's Python workers, processes of their own whose generator "
               "(Tumult Core's prng(): RDRAND, else os.urandom, with no seed) the process dpaudit talks to does not reach")
"""Why a Tumult query on a Spark DataFrame (Core's aggregations, every Analytics query) cannot be replayed."""


def _runnable(path: str | os.PathLike) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def interpreter(variable: str, environment: str) -> str | None:
    """Return the interpreter of a library's environment of its own, or None when there is none.

    $`variable` when set (None if it names no runnable file: no fallback
    then), else that of the declared `environment` when it is built (an
    environment that exists is complete: mechanisms/environments.py); never
    builds it.
    """
    given = os.environ.get(variable)
    if given is not None:
        return given if given and _runnable(given) else None
    return str(built_python(environment, create=False)) if environment_exists(environment) else None


def registered_environment(variable: str, environment: str) -> str | None:
    """Return the environment to register a library's mechanisms under: the declared one, unless `variable` names another
    interpreter (then None: the user's own, which `ready` cannot check), so a whole suite leaves the built one's rows out."""
    return None if os.environ.get(variable) else environment


def absent(library: str, variable: str, environment: str) -> InvalidParameterError:
    """Return the one-sentence error for a library whose environment is neither given nor built."""
    return InvalidParameterError(f"{library}'s environment is absent (set {variable} or run `dpaudit env create {environment}`).")


def tumult_python() -> str | None:
    """Return the interpreter of Tumult Core's environment ($DPAUDIT_TUMULT_PYTHON, else the built `tumult-core`), or None."""
    return interpreter(ENVIRONMENT_VARIABLE, ENVIRONMENT.name)


@functools.lru_cache(maxsize=64)
def _describe(python: str, kind: str, params_json: str) -> dict[str, Any]:
    """Return Tumult's claim and noise for `kind` (`tumult_side.describe`, run in Tumult's environment)."""
    argv = [python, str(SIDE), "describe", kind, params_json]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=DESCRIBE_TIMEOUT,
                              start_new_session=True)
    except subprocess.TimeoutExpired:
        raise MechanismError(f"Tumult did not state its claim for '{kind}' within {DESCRIBE_TIMEOUT:g} seconds ({python}).") from None
    except OSError as exc:
        raise InvalidParameterError(f"Tumult's interpreter '{python}' cannot be run ({exc.strerror or exc}).") from None
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    if done.returncode != 0 or not lines:
        errors = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = (errors[-1] if errors else f"exit status {done.returncode}").strip().rstrip(".")
        if reason.startswith(("ValueError", "TypeError")):
            raise InvalidParameterError(f"Tumult refused the parameters of '{kind}' {params_json}: {reason}.")
        raise MechanismError(f"Tumult could not state its claim for '{kind}' ({python}): {reason}.")
    return json.loads(lines[-1])


def _process(python: str) -> ExternalProcess:
    """Return the one Tumult process of `python` (`tumult_side:serve`), shared by every Tumult mechanism of this process.

    Spark takes 20–25 s to start, so the aggregations of one run share it.
    Closing any Tumult mechanism stops this process; the next draw starts it again.
    """
    return side_process(python, "tumult_side:serve", name="Tumult Core", folder=str(SIDE.parent), timeout=BATCH_TIMEOUT)


class Requests(SideRequests):
    """`sampler(data, size, rng)` of a Tumult Core or Analytics mechanism: each request carries kind, rows and parameters.

    `rows`: with `records`, the present records (`nan` = absent dropped),
    each repeated `repeat` times, for the aggregations; else the query
    answer, for the noise measurements. A group label outside
    [0, `groups`) is a ValueError. With `bits`, the doubles are released as
    their IEEE-754 bits. Picklable (a copy carries the command, as for
    `ExternalProcess`, and starts its own process).
    """

    def __init__(self, process: ExternalProcess, kind: str, params: dict[str, Any], *, records: bool, repeat: int = 1,
                 bits: bool = False, groups: int | None = None) -> None:
        self.process, self.kind, self.params = process, kind, params
        self.records, self.repeat, self.bits, self.groups = records, repeat, bits, groups

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Return `size` answers of the query on `data` from the process (ValueError for a bad group label)."""
        values = np.asarray(data, dtype=float).ravel()
        rows = values[~np.isnan(values)] if self.records else values[:1]
        if self.groups is not None and np.any((rows != np.round(rows)) | (rows < 0) | (rows >= self.groups)):
            raise ValueError(f"group labels must be integers in [0, {self.groups - 1}] (nan for an absent row)")
        request = {"kind": [self.kind], "rows": np.repeat(rows, self.repeat), **{k: [v] for k, v in self.params.items()}}
        out = self.process(request, size, rng)
        return as_bits(out) if self.bits else out

    @property
    def not_replayable(self) -> str | None:
        """Return why a replay cannot reach this query's draws (a Spark query's), or None for a measurement on a number."""
        return None if self.kind in REPLAYED else SPARK_NOISE

    def replay(self, d0: Any, d1: Any, rng: np.random.Generator) -> dict[str, Any]:
        """Return the side's record of one measurement on d0 with Tumult's `prng()` recording and one on d1 replaying it.

        The keys of `replay_side.replay` (release0, release1, failure, tape,
        divergences, outside); each draw is one `randint` of the bits
        Tumult's exact sampler asks for. The seed comes from `rng`.
        """
        answers = [np.asarray(d, dtype=float).ravel()[:1] for d in (d0, d1)]
        request = {"kind": ["replay"], "inner": [self.kind], "rows": answers[0], "rows1": answers[1],
                   **{k: [v] for k, v in self.params.items()}}
        record = json.loads(str(self.process(request, 1, rng)[0]))
        if self.bits:
            record.update({k: None if record[k] is None else as_bits(np.asarray(record[k], dtype=float))
                           for k in ("release0", "release1")})
        return record



@dataclasses.dataclass(frozen=True)
class _Spec:
    """What one adapter audits: Tumult's kind, the parameters sent, how the dataset is read, and what dpaudit knows."""

    name: str
    kind: str
    params: dict[str, Any]
    pair: tuple[np.ndarray, np.ndarray]
    neighbours: NeighbourCheck
    records: bool
    bits: bool = False
    groups: int | None = None


def _build(spec: _Spec, event_of: Any, text: str) -> Mechanism:
    """Return the mechanism of `spec`: Tumult's claim, dpaudit's event from Tumult's noise, Tumult's process as sampler."""
    python = tumult_python()
    if python is None:
        raise absent("Tumult", ENVIRONMENT_VARIABLE, ENVIRONMENT.name)
    described = _describe(python, spec.kind, json.dumps(spec.params, sort_keys=True))
    mech = external_python(  # the mechanism's claim, pair and relation; its draws go to the shared process
        python, f"tumult_side:{spec.kind}", epsilon=described["epsilon"], delta=described["delta"],
        relation=Relation.ADD_REMOVE, name=spec.name, default_pair=spec.pair, neighbours=spec.neighbours,
        timeout=BATCH_TIMEOUT, path=[str(SIDE.parent)], check=False,
    )
    sampler = Requests(_process(python), spec.kind, spec.params, records=spec.records, bits=spec.bits, groups=spec.groups)
    noise = {k: described[k] for k in ("alpha", "scale", "sigma_squared") if k in described}
    return dataclasses.replace(
        mech, sampler=sampler, event=event_of(described), null_record=np.nan if spec.records else None,  # an absent row
        params={**spec.params, "tmlt_core": described["tmlt_core"], "noise_measurement": described["noise"], **noise,
                **({"rho": described["rho"]} if "rho" in described else {})},
        description=f"Tumult Core {described['tmlt_core']} {text} (run in {python}; Tumult's own RNG).",
    )


def _answers() -> tuple[tuple[np.ndarray, np.ndarray], NeighbourCheck]:
    return (np.array([0.0]), np.array([1.0])), answers_within(1.0)


def one_row_added(present: float, added: float, n: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Return n − 1 rows `present` and an absent row (nan), against the same with the row `added`."""
    d0 = np.full(n, float(present))
    d0[0] = np.nan
    d1 = d0.copy()
    d1[0] = added
    return d0, d1


def _positive(value: float, name: str, owner: str) -> float:
    return check_real(value, name, owner, low=0.0, low_open=True)


def _delta(value: float, owner: str) -> float:
    return check_real(value, "delta", owner, low=0.0, low_open=True, high=1.0, high_open=True)


def _laplace(name: str, scale: float, bits: bool) -> Mechanism:
    from dp_accounting import dp_event

    pair, neighbours = _answers()
    spec = _Spec(name, "laplace", {"scale": _positive(scale, "scale", name)}, pair, neighbours, records=False, bits=bits)
    return _build(spec, lambda d: dp_event.LaplaceDpEvent(noise_multiplier=d["scale"]),
                  "AddLaplaceNoise on a number (sensitivity 1)" + ("; the output's IEEE-754 bits" if bits else ""))


def tumult_laplace(*, scale: float = 1.0) -> Mechanism:
    """Return Tumult's `AddLaplaceNoise(NumpyFloatDomain(), scale)` on a query answer; claim ε = privacy_function(1) = 1/scale.

    Upper bound: the Laplace profile at the scale Tumult reports.
    """
    return _laplace("tumult_laplace", scale, bits=False)


def tumult_laplace_bits(*, scale: float = 1.0) -> Mechanism:
    """Return `tumult_laplace` released as the exact double's IEEE-754 bits (the low-bits attack of Mironov, CCS 2012).

    Tumult samples u + Laplace(b) by inverting the CDF with the location
    inside, in interval arithmetic, and returns the one double the interval
    holds (`tmlt.core.random.laplace`): a rounding of the ideal real
    output, so post-processing, and the bits should leak nothing.
    """
    return _laplace("tumult_laplace_bits", scale, bits=True)


def _gaussian(name: str, sigma_squared: float, delta: float, bits: bool) -> Mechanism:
    from dp_accounting import dp_event

    pair, neighbours = _answers()
    params = {"sigma_squared": _positive(sigma_squared, "sigma_squared", name), "delta": _delta(delta, name)}
    spec = _Spec(name, "gaussian", params, pair, neighbours, records=False, bits=bits)

    def event(d: dict[str, Any]) -> dp_event.DpEvent:
        if bits:
            return dp_event.NonPrivateDpEvent()
        return dp_event.GaussianDpEvent(noise_multiplier=float(np.sqrt(d["sigma_squared"])))

    return _build(spec, event, "AddGaussianNoise on a number (sensitivity 1)"
                  + ("; the output's IEEE-754 bits, whose low bits leak the input (docs/libraries.md)" if bits else ""))


def tumult_gaussian(*, sigma_squared: float = 16.0, delta: float = GAUSSIAN_DELTA) -> Mechanism:
    """Return Tumult's `AddGaussianNoise(NumpyFloatDomain(), sigma_squared)` on a query answer.

    Tumult states ρ = 1/(2σ²)-zCDP; the claim is the ε its `RhoZCDPToApproxDP`
    accepts at `delta` (ρ + 2√(ρ log(1/δ)), Bun & Steinke 2016). Upper bound:
    the exact Gaussian profile at σ (Balle & Wang 2018), outputs taken as reals.
    """
    return _gaussian("tumult_gaussian", sigma_squared, delta, bits=False)


def tumult_gaussian_bits(*, sigma_squared: float = 16.0, delta: float = GAUSSIAN_DELTA) -> Mechanism:
    """FINDING (leaks): `tumult_gaussian` released as the exact double's IEEE-754 bits.

    Tumult's AddGaussianNoise returns `float(value) + gaussian(0, σ²)`: the
    noise is a correctly rounded double, then added in floating point, so
    the sum is rounded to the grid of the result, as in Mironov's attack
    (CCS 2012). At 0 the outputs in (−½, ½) are the noise itself, any
    double, two thirds of them off the grid 2^-53; at 1 they are 1 + noise
    for noise in (−3/2, −½), always multiples of 2^-53 (exact by Sterbenz's
    lemma). Upper bound: none (non-private event), as for `pydp_gaussian_bits`.
    Tumult's AddLaplaceNoise puts the location inside the sampler and is
    not affected (`tumult_laplace_bits`).
    """
    return _gaussian("tumult_gaussian_bits", sigma_squared, delta, bits=True)


def tumult_geometric_count(*, epsilon: float = 1.0) -> Mechanism:
    """Return Tumult's `create_count_measurement(PureDP, ε, GEOMETRIC)` on a Spark DataFrame; claim privacy_function(1).

    Tumult's counts take integer noise only (geometric for PureDP, discrete
    Gaussian for zCDP), so this is its pure-DP count. Worst case: one row
    added to four. Upper bound: the discrete Laplace profile at the α Tumult
    reports, sensitivity 1.
    """
    from dp_accounting import dp_event

    params = {"epsilon": _positive(epsilon, "epsilon", "tumult_geometric_count"), "noise": "geometric"}
    spec = _Spec("tumult_geometric_count", "count", params, one_row_added(1.0, 1.0), present_records(-np.inf, np.inf),
                 records=True)
    return _build(spec, lambda d: dp_event.DiscreteLaplaceDpEvent(noise_parameter=1.0 / d["alpha"], sensitivity=1),
                  "create_count_measurement (geometric noise, PureDP) on a Spark DataFrame")


def tumult_gaussian_count(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA) -> Mechanism:
    """Return Tumult's `create_count_measurement(RhoZCDP, ρ, DISCRETE_GAUSSIAN)` on a Spark DataFrame.

    Claim: the ε Tumult's `RhoZCDPToApproxDP` accepts at `delta`. Upper
    bound: the discrete Gaussian's profile at the σ² Tumult reports,
    sensitivity 1 (dp_accounting's PLD of the discrete Gaussian).
    """
    from dpaudit.mechanisms.events import DiscreteGaussianDpEvent

    params = {"rho": _positive(rho, "rho", "tumult_gaussian_count"), "noise": "discrete_gaussian",
              "delta": _delta(delta, "tumult_gaussian_count")}
    spec = _Spec("tumult_gaussian_count", "count", params, one_row_added(1.0, 1.0), present_records(-np.inf, np.inf),
                 records=True)
    return _build(spec, lambda d: DiscreteGaussianDpEvent(sigma=float(np.sqrt(d["sigma_squared"])), sensitivity=1),
                  "create_count_measurement (discrete Gaussian noise, zCDP) on a Spark DataFrame")


def tumult_laplace_sum(*, epsilon: float = 1.0, lower: float = -2.0, upper: float = 1.0) -> Mechanism:
    """Return Tumult's `create_sum_measurement(PureDP, ε, LAPLACE, lower, upper)` of a float column; claim privacy_function(1).

    Tumult clips each row to [lower, upper]. Worst case: the bound of
    largest magnitude added to rows at the midpoint. Upper bound: the
    Laplace profile at the scale Tumult reports over dpaudit's own
    sensitivity for add/remove, max(|lower|, |upper|).
    """
    from dp_accounting import dp_event

    owner = "tumult_laplace_sum"
    lo = check_real(lower, "lower", owner)
    hi = check_real(upper, "upper", owner, low=lo, low_open=True)
    params = {"epsilon": _positive(epsilon, "epsilon", owner), "lower": lo, "upper": hi, "noise": "laplace"}
    extreme = lo if abs(lo) > abs(hi) else hi
    spec = _Spec(owner, "clipped_sum", params, one_row_added((lo + hi) / 2, extreme), present_records(-np.inf, np.inf),
                 records=True)
    sensitivity = max(abs(lo), abs(hi))
    return _build(spec, lambda d: dp_event.LaplaceDpEvent(noise_multiplier=d["scale"] / sensitivity),
                  "create_sum_measurement (Laplace noise, PureDP) of a float column clipped to "
                  f"[{lo:g}, {hi:g}] on a Spark DataFrame")


def _gaussian_sum(name: str, rho: float, delta: float, lower: float, upper: float, bits: bool) -> Mechanism:
    from dp_accounting import dp_event

    lo = check_real(lower, "lower", name)
    hi = check_real(upper, "upper", name, low=lo, low_open=True)
    params = {"rho": _positive(rho, "rho", name), "lower": lo, "upper": hi, "noise": "gaussian", "delta": _delta(delta, name)}
    extreme = lo if abs(lo) > abs(hi) else hi
    spec = _Spec(name, "clipped_sum", params, one_row_added((lo + hi) / 2, extreme), present_records(-np.inf, np.inf),
                 records=True, bits=bits)
    sensitivity = max(abs(lo), abs(hi))

    def event(d: dict[str, Any]) -> dp_event.DpEvent:
        if bits:
            return dp_event.NonPrivateDpEvent()
        return dp_event.GaussianDpEvent(noise_multiplier=float(np.sqrt(d["sigma_squared"])) / sensitivity)

    return _build(spec, event, f"create_sum_measurement (Gaussian noise, zCDP) of a float column clipped to [{lo:g}, {hi:g}] "
                  "on a Spark DataFrame" + ("; the output's IEEE-754 bits, whose low bits leak the input" if bits else ""))


def tumult_gaussian_sum(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA, lower: float = -2.0, upper: float = 1.0) -> Mechanism:
    """Return Tumult's `create_sum_measurement(RhoZCDP, ρ, GAUSSIAN, lower, upper)` of a float column.

    Claim: the ε Tumult's `RhoZCDPToApproxDP` accepts at `delta`. Upper
    bound: the exact Gaussian profile at σ/Δ, σ² as Tumult reports it and
    Δ = max(|lower|, |upper|) (one row added or removed), outputs taken as reals.
    """
    return _gaussian_sum("tumult_gaussian_sum", rho, delta, lower, upper, bits=False)


def tumult_gaussian_sum_bits(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA, lower: float = -2.0,
                             upper: float = 1.0) -> Mechanism:
    """FINDING (leaks): `tumult_gaussian_sum` released as the exact double's bits: the sum's noise is AddGaussianNoise's.

    As in `tumult_gaussian_bits`: the sum plus a correctly rounded Gaussian
    double, added in floating point. At the default pair the sums are −2 and
    −4; outputs in (−1, 1) are then multiples of 2^-52 and 2^-51, so an odd
    multiple of 2^-52 there can only come from −2.
    """
    return _gaussian_sum("tumult_gaussian_sum_bits", rho, delta, lower, upper, bits=True)


def tumult_grouped_count(*, epsilon: float = 1.0, groups: int = 3) -> Mechanism:
    """Return Tumult's grouped `create_count_measurement(PureDP, ε, GEOMETRIC)` over public groups 0 .. groups − 1.

    A row is a group label (`nan`: absent); the output is the vector of
    noisy counts, one per group. One row changes one count by 1, so the
    upper bound is the discrete Laplace profile at the α Tumult reports.
    """
    from dp_accounting import dp_event

    owner = "tumult_grouped_count"
    k = check_int(groups, "groups", owner, low=1)
    params = {"epsilon": _positive(epsilon, "epsilon", owner), "groups": k, "noise": "geometric"}
    d0 = np.array([np.nan] + [float(i % k) for i in range(4)])
    d1 = d0.copy()
    d1[0] = 0.0
    spec = _Spec(owner, "grouped_count", params, (d0, d1), present_records(0.0, k - 1.0), records=True, groups=k)
    return _build(spec, lambda d: dp_event.DiscreteLaplaceDpEvent(noise_parameter=1.0 / d["alpha"], sensitivity=1),
                  f"create_count_measurement grouped by {k} public groups (geometric noise, PureDP) on a Spark DataFrame")


if tumult_python() is not None:
    # Tumult runs in its own environment: 54–70 µs an output on a number, 181–431 µs under Spark. The Gaussian
    # variants that release the double's low bits are the known-broken ones; the Laplace one samples inside the
    # exact sampler, and its bits leak nothing (docs/libraries.md).
    _BROKEN = {"tumult_gaussian_bits", "tumult_gaussian_sum_bits"}
    for _factory, _cost in ((tumult_laplace, 0.1), (tumult_laplace_bits, 0.1), (tumult_gaussian, 0.1),
                            (tumult_gaussian_bits, 0.1), (tumult_geometric_count, 0.02), (tumult_gaussian_count, 0.02),
                            (tumult_laplace_sum, 0.02), (tumult_gaussian_sum, 0.02), (tumult_gaussian_sum_bits, 0.02),
                            (tumult_grouped_count, 0.02)):
        _expected = "violation" if _factory.__name__ in _BROKEN else "consistent"
        register(_factory.__name__, expected=_expected, suite_trials=_cost,
                 environment=registered_environment(ENVIRONMENT_VARIABLE, ENVIRONMENT.name))(_factory)
