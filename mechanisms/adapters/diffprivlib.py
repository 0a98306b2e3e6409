"""Adapters that audit IBM diffprivlib through the calls its documentation shows, in diffprivlib's own environment.

diffprivlib 0.6.6 imports with scikit-learn < 1.6 only, so it never shares
dpaudit's environment: each release runs in an environment declared here
(`dpaudit env create diffprivlib-0.6.6`; built on the first audit when
absent) and is reached through dpaudit's external-process protocol
(`external_python`), where `mechanisms/scripts/diffprivlib_side.py` (which
see) calls diffprivlib. Registration builds nothing; building a mechanism
builds its environment when it is missing.

Three families, each as a user calls it:

- mechanisms: `Class(epsilon=..., sensitivity=..., ...).randomise(answer)`.
  The dataset is the query answer (one number; Exponential: the utility
  vector), neighbours are answers within the declared sensitivity (and, for
  the bounded variants, inside [lower, upper]). Claim: the (ε, δ) given.
- tools: `diffprivlib.tools.NAME(records, epsilon=ε, bounds=(lower, upper))`.
  Their calibration divides by the number of records (`mean`: (upper −
  lower)/n) or bounds the output by it (`sum`: [n·lower, n·upper]), so the
  length is public: the relation is replace-one, except `histogram`
  (sensitivity 1 per bin: add/remove). The `nan*` tools are documented to
  ignore NaN, so there NaN (a missing value) is a record.
- models: `Model(epsilon=ε, bounds=..., ...).fit(X, y)`, releasing what the
  user reads back (`diffprivlib_side._release`). Rows are the features then
  the label (or target); replace-one, as the models' calibrations (means of
  n records, ranges of a record's contribution) assume.

Default pairs are chosen one way for every adapter, from its declared
bounds only: a query answer at the lower bound against one a sensitivity
above; n records at the lower bound against the same with one record moved
to the upper bound (added, for the histogram); n rows at the lower corner
(labels cycling over the first two classes) against one row moved to the
upper corner with the last label. Other pairs come from the bug-hunter
neighbours (`dpaudit audit NAME --hunt`) or from --d0/--d1.

Randomness: the seed dpaudit sends each batch seeds one
`numpy.random.RandomState`, handed to diffprivlib's `random_state=`, so an
audit repeats for its seed. That state is the one interception point of a
replay (`Requests.replay`, `dpaudit replay NAME`): the side records every
draw diffprivlib makes from it on D and answers the same draws on D′.
Those draws are diffprivlib's raw material (Laplace: four uniforms it
transforms; Gaussian: two standard normals it scales; Geometric: one
uniform), so the three mechanisms whose release is the answer plus noise
of a law their parameters fix declare that law (`released_noise`), and
the replay prices a move of the release by it; every other adapter's move
is "not priced" and certified black-box.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Optional

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Mechanism, Relation
from dpaudit.mechanisms.builtins.floating_point import as_bits
from dpaudit.mechanisms.environments import ENVIRONMENTS, Environment, declare, environment_python
from dpaudit.mechanisms.external.processes import ExternalProcess, SideRequests, external_python, side_process
from dpaudit.mechanisms.neighbours import NeighbourCheck, any_length, by_relation, equal_rows, in_domain, local
from dpaudit.mechanisms.neighbours import declare as declare_domain
from dpaudit.mechanisms.records import BoxRecords, NumberRecords
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = ["ENVIRONMENT", "OLDER_ENVIRONMENT", "Requests", "answer_pair", "model_pair", "record_pair"]

ENVIRONMENT = "diffprivlib-0.6.6"
OLDER_ENVIRONMENT = "diffprivlib-0.4.1"
SIDE = Path(__file__).resolve().parents[1] / "scripts" / "diffprivlib_side.py"
BATCH_TIMEOUT = 1800.0  # seconds for one batch: up to ~0.6 s a model fit (D2's diverging one), the imports included

declare(Environment(
    name=ENVIRONMENT, packages=("diffprivlib==0.6.6", "scikit-learn<1.6"), python="3.11",
    description="IBM diffprivlib 0.6.6 (the latest release) with the scikit-learn it imports with",
    check="import diffprivlib, sklearn", needs=()))
declare(Environment(
    name=OLDER_ENVIRONMENT, packages=("diffprivlib==0.4.1", "scikit-learn<1.1", "numpy<1.24", "scipy<1.10"),
    python="3.9",
    description="IBM diffprivlib 0.4.1 (January 2021; the fix of issue 34), with the scikit-learn and numpy of its time",
    check="import diffprivlib, sklearn", needs=()))


def _process(python: str) -> ExternalProcess:
    """Return the one diffprivlib process of `python` (`diffprivlib_side:serve`), shared by every adapter of this process."""
    return side_process(python, "diffprivlib_side:serve", name="diffprivlib", folder=str(SIDE.parent), timeout=BATCH_TIMEOUT)


class Requests(SideRequests):
    """`sampler(data, size, rng)` of a diffprivlib adapter: sends the spec and the dataset, returns the outputs.

    With `bits`, the doubles are released as their IEEE-754 bits (uint64).
    `released_noise` is the law of the noise added to the answer, where the
    parameters fix it (`released_noise`), read by a replay to price a move.
    Picklable (a copy starts its own process, as `ExternalProcess` does).
    """

    def __init__(self, process: ExternalProcess, spec: dict[str, Any], *, bits: bool = False,
                 released_noise: dict[str, Any] | None = None) -> None:
        self.process, self.spec, self.bits = process, spec, bits
        self.released_noise = released_noise

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Return `size` outputs of diffprivlib's call on `data` (an array of records, rows or answers)."""
        request = {"spec": [json.dumps(self.spec, sort_keys=True)], **_columns(data, "")}
        out = self.process(request, size, rng)
        return as_bits(out) if self.bits else out

    def replay(self, d0: Any, d1: Any, rng: np.random.Generator) -> dict[str, Any]:
        """Return the side's record of one call on d0 with a recording `random_state` and one on d1 with its draws replayed.

        The keys of `replay_side.replay`: release0, release1 (None when the
        call on d1 raised; `failure` says how), tape (each draw's method,
        arguments and noise), divergences, outside (sources drawn from besides
        the state diffprivlib is handed). The seed comes from `rng`.
        """
        spec = json.dumps({"kind": "replay", "inner": self.spec}, sort_keys=True)
        record = json.loads(str(self.process({"spec": [spec], **_columns(d0, ""), **_columns(d1, "1")}, 1, rng)[0]))
        if self.bits:
            record.update({k: None if record[k] is None else as_bits(np.asarray(record[k], dtype=float))
                           for k in ("release0", "release1")})
        return record


def _columns(data: Any, suffix: str) -> dict[str, np.ndarray]:
    """Return the request's columns of a dataset: its rows (NaN as 0) and the mask of its missing values (JSON has no NaN)."""
    rows = np.asarray(data, dtype=float)
    missing = np.isnan(rows)  # a missing value (a record of the nan-tools) travels as a mask
    return {"rows" + suffix: np.where(missing, 0.0, rows), "missing" + suffix: missing.astype(np.int64)}



@dataclasses.dataclass(frozen=True)
class _Spec:
    """One adapter: diffprivlib's call (kind, name, parameters), the claim, the relation, the pair and the check."""

    name: str
    call: dict[str, Any]
    epsilon: float
    delta: float
    relation: Relation
    pair: tuple[np.ndarray, np.ndarray]
    neighbours: NeighbourCheck
    text: str
    records: Any = None
    null_record: Any = None
    bits: bool = False


def _environment(environment: str, owner: str) -> str:
    if environment not in ENVIRONMENTS or not environment.startswith("diffprivlib-"):
        known = ", ".join(sorted(e for e in ENVIRONMENTS if e.startswith("diffprivlib-")))
        raise InvalidParameterError(f"The 'environment' parameter of {owner} must be one of {known}; got {environment!r} instead.")
    return environment


def _build(spec: _Spec, environment: str) -> Mechanism:
    """Return the mechanism of `spec`: diffprivlib's call served by the environment's process, claimed at its (ε, δ)."""
    from dp_accounting import dp_event

    python = str(environment_python(_environment(environment, spec.name)))
    mech = external_python(python, "diffprivlib_side:serve", epsilon=spec.epsilon, delta=spec.delta,
                           relation=spec.relation, name=spec.name, default_pair=spec.pair, neighbours=spec.neighbours,
                           null_record=spec.null_record, timeout=BATCH_TIMEOUT, path=[str(SIDE.parent)], check=False)
    extra = {"event": dp_event.NonPrivateDpEvent()} if spec.bits else {}
    return dataclasses.replace(
        mech, sampler=Requests(_process(python), spec.call, bits=spec.bits, released_noise=released_noise(spec)),
        records=spec.records,
        params={**spec.call["params"], "environment": environment},
        description=f"diffprivlib ({environment}) {spec.text}" + ("; the output's IEEE-754 bits" if spec.bits else ""),
        **extra,
    )


def released_noise(spec: _Spec) -> dict[str, Any] | None:
    """Return the law of the noise diffprivlib adds to the answer, from the call's parameters, or None where none is fixed.

    diffprivlib 0.6.6 (mechanisms/laplace.py, gaussian.py, geometric.py):
    `Laplace` releases value − b·L, L standard Laplace made of four
    uniforms, b = Δ/(ε − log(1 − δ)); `Gaussian` releases value + σ·Z, Z of
    two standard normals, σ = √(2 log(1.25/δ))·Δ/ε; `Geometric` releases
    value plus a two-sided geometric of ratio e^(−ε/Δ) (a unit shift costs
    ε/Δ, numpy's `geometric` of p = 1 − e^(−ε/Δ)). None for their bounded,
    folded, truncated or discrete variants (the release is not the answer
    plus that noise), for tools and models, and for a release of bits.
    """
    call = spec.call
    if call["kind"] != "mechanism" or spec.bits:
        return None
    params = call["params"]
    eps, sens, delta = params.get("epsilon"), params.get("sensitivity"), params.get("delta", 0.0)
    if call["name"] == "Laplace":
        return {"method": "laplace", "scale": sens / (eps - float(np.log1p(-delta)))}
    if call["name"] == "Gaussian":
        return {"method": "normal", "scale": float(np.sqrt(2 * np.log(1.25 / delta))) * sens / eps}
    if call["name"] == "Geometric":
        return {"method": "geometric", "p": -float(np.expm1(-eps / sens))}
    return None


# ---- neighbours and default pairs, from declared bounds only


def answer_pair(lower: float, sensitivity: float) -> tuple[np.ndarray, np.ndarray]:
    """Return the answer `lower` against `lower` + `sensitivity` (one query answer each)."""
    return np.array([float(lower)]), np.array([float(lower) + float(sensitivity)])


def _answers(sensitivity: float, domain: NumberRecords, norm: float = np.inf) -> NeighbourCheck:
    """Return a check: answers in `domain`, of one length, ‖d0 − d1‖_norm ≤ sensitivity.

    It sees pairs of any lengths (`any_length`): an added answer is another query, not a neighbour.
    """

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        outside = in_domain(domain, d0, d1)
        if outside:
            return outside.replace("records are", "query answers are")
        if np.shape(d0) != np.shape(d1):
            return f"they must answer the same queries; the answers have shapes {np.shape(d0)} and {np.shape(d1)}"
        dist = float(np.linalg.norm((np.asarray(d0, float) - np.asarray(d1, float)).ravel(), ord=norm))
        if dist > sensitivity + 1e-12:
            return f"their answers differ by {dist:g}, more than the sensitivity {sensitivity:g}"
        return None

    return declare_domain(any_length(local(check)), domain)


def record_pair(lower: float, upper: float, n: int, *, added: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Return n records at `lower` against the same with the first moved to `upper` (`added`: one record `upper` appended)."""
    d0 = np.full(n, float(lower))
    if added:
        return d0, np.append(d0, float(upper))
    d1 = d0.copy()
    d1[0] = float(upper)
    return d0, d1


def model_pair(lower: float, upper: float, features: int, n: int, labels: int | None,
               y_bounds: tuple[float, float] | None = (0.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    """Return n rows at the lower corner against the same with the first row moved to the upper corner.

    With `labels` (a classifier's declared number of classes), the base
    rows' labels cycle over the first two classes and the moved row takes
    the last one; else the last column is a target, at `y_bounds[0]` and
    moved to `y_bounds[1]`; with neither (an unsupervised model), rows are features only.
    """
    if not labels and y_bounds is None:
        d0 = np.full((n, features), float(lower))
        d1 = d0.copy()
        d1[0] = float(upper)
        return d0, d1
    d0 = np.full((n, features + 1), float(lower))
    if labels:
        d0[:, -1] = np.arange(n) % min(2, labels)
    else:
        d0[:, -1] = y_bounds[0]
    d1 = d0.copy()
    d1[0, :-1] = float(upper)
    d1[0, -1] = labels - 1 if labels else y_bounds[1]
    return d0, d1


def _rows(lower: float, upper: float, features: int, labels: int | None,
          y_bounds: tuple[float, float] | None) -> NeighbourCheck:
    """Return a check of replace-one on rows: features in [lower, upper], then a label in [0, labels) or a target in y_bounds.

    With neither labels nor y_bounds (an unsupervised model) a row is its features only.
    """
    target = bool(labels) or y_bounds is not None
    low, high = (0.0, labels - 1.0) if labels else (y_bounds if y_bounds is not None else (lower, upper))
    width = features + target
    domain = NumberRecords(min(lower, low), max(upper, high), width=width)

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        for d, label in ((d0, "d0"), (d1, "d1")):
            if np.ndim(d) != 2 or np.shape(d)[1] != width:
                return f"{label} must be rows of {width} numbers ({features} features{' and a label' if target else ''})"
            x, y = np.asarray(d[:, :features], float), np.asarray(d[:, width - 1], float)
            if not (np.all(np.isfinite(x)) and np.all((x >= lower) & (x <= upper))):
                return f"the features of {label} must lie in [{lower:g}, {upper:g}]"
            if not (np.all(np.isfinite(y)) and np.all((y >= low) & (y <= high))) or (labels and np.any(y != np.round(y))):
                return f"the last column of {label} must be {'a label' if labels else 'a target'} in [{low:g}, {high:g}]"
        if len(d0) != len(d1):
            return f"under replace-one they must have the same length; they have {len(d0)} and {len(d1)} rows"
        changed = int(np.count_nonzero(~equal_rows(d0, d1)))
        return f"they differ in {changed} rows, more than 1" if changed > 1 else None

    return declare_domain(local(check), domain)


def _bounds(lower: float, upper: float, owner: str) -> tuple[float, float]:
    lo = check_real(lower, "lower", owner)
    return lo, check_real(upper, "upper", owner, low=lo, low_open=True)


def _positive(value: float, name: str, owner: str) -> float:
    return check_real(value, name, owner, low=0.0, low_open=True)


def _delta(value: float, owner: str) -> float:
    return check_real(value, "delta", owner, low=0.0, low_open=True, high=1.0, high_open=True)


# ---- mechanisms: randomise(answer)


def _mechanism(name: str, cls: str, params: dict[str, Any], *, epsilon: float, delta: float, sensitivity: float,
               bounds: tuple[float, float] | None, integer: bool, bits: bool, environment: str) -> Mechanism:
    """Return diffprivlib's `cls(**params).randomise(answer)` on one query answer, claimed at (ε, δ)."""
    low, high = bounds if bounds is not None else (-np.inf, np.inf)
    domain = NumberRecords(low, high, integer=False)
    pair = answer_pair(low if bounds is not None else 0.0, sensitivity)
    call = {"kind": "mechanism", "name": cls, "params": params, "integer": integer}
    text = f"{cls}({', '.join(f'{k}={v!r}' for k, v in params.items())}).randomise(answer)"
    spec = _Spec(name, call, epsilon, delta, Relation.ADD_REMOVE, pair, _answers(sensitivity, domain), text, bits=bits)
    return _build(spec, environment)


def _noise(name: str, cls: str, *, bounded: bool = False, gaussian: bool = False, integer: bool = False,
           bits: bool = False, eps: float = 1.0, doc: str = "") -> Any:
    """Return the registered factory of a noise mechanism `cls` with its documented parameters as keywords."""
    sensitivity_default = 1 if integer else 1.0

    def factory(*, epsilon: float = eps, delta: float = 1e-5 if gaussian else 0.0, sensitivity: float = sensitivity_default,
                lower: float = 0.0, upper: float = 10.0, environment: str = ENVIRONMENT) -> Mechanism:
        e = _positive(epsilon, "epsilon", name)
        d = _delta(delta, name) if gaussian else check_real(delta, "delta", name, low=0.0, high=1.0, high_open=True)
        s = check_int(sensitivity, "sensitivity", name, low=1) if integer else _positive(sensitivity, "sensitivity", name)
        params: dict[str, Any] = {"epsilon": e, "sensitivity": s, **({"delta": d} if gaussian or d else {})}
        bounds = None
        if bounded:
            bounds = _bounds(lower, upper, name)
            params.update(lower=int(bounds[0]) if integer else bounds[0], upper=int(bounds[1]) if integer else bounds[1])
        return _mechanism(name, cls, params, epsilon=e, delta=d, sensitivity=s, bounds=bounds, integer=integer, bits=bits,
                          environment=environment)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (f"Return diffprivlib's `{cls}` on one query answer (`randomise(answer)`); claim: its (epsilon, delta)."
                       + (f"\n\n    {doc}" if doc else ""))
    return factory


_LOW_BITS = ("FINDING (leaks): the output released as the exact double's IEEE-754 bits. diffprivlib adds floating-point "
             "noise to the answer, so the result lies on the grid of the answer plus noise (Mironov, CCS 2012; "
             "diffprivlib issue 94).")
NOISE = (
    _noise("diffprivlib_laplace", "Laplace"),
    _noise("diffprivlib_laplace_bits", "Laplace", bits=True, doc=_LOW_BITS),
    _noise("diffprivlib_laplace_truncated", "LaplaceTruncated", bounded=True),
    _noise("diffprivlib_laplace_folded", "LaplaceFolded", bounded=True),
    _noise("diffprivlib_laplace_bounded_domain", "LaplaceBoundedDomain", bounded=True),
    _noise("diffprivlib_gaussian", "Gaussian", gaussian=True, eps=0.5),
    _noise("diffprivlib_gaussian_analytic", "GaussianAnalytic", gaussian=True),
    _noise("diffprivlib_gaussian_analytic_bits", "GaussianAnalytic", gaussian=True, bits=True, doc=_LOW_BITS),
    _noise("diffprivlib_gaussian_discrete", "GaussianDiscrete", gaussian=True, integer=True),
    _noise("diffprivlib_geometric", "Geometric", integer=True),
    _noise("diffprivlib_geometric_truncated", "GeometricTruncated", bounded=True, integer=True),
    _noise("diffprivlib_geometric_folded", "GeometricFolded", bounded=True, integer=True),
    _noise("diffprivlib_snapping", "Snapping", bounded=True),
    _noise("diffprivlib_staircase", "Staircase"),
)


def diffprivlib_laplace_bounded_noise(*, epsilon: float = 1.0, delta: float = 0.1, sensitivity: float = 1.0,
                                      environment: str = ENVIRONMENT) -> Mechanism:
    """Return diffprivlib's `LaplaceBoundedNoise` (noise bounded, so δ > 0) on one query answer; claim (ε, δ)."""
    name = "diffprivlib_laplace_bounded_noise"
    e, d, s = _positive(epsilon, "epsilon", name), _delta(delta, name), _positive(sensitivity, "sensitivity", name)
    return _mechanism(name, "LaplaceBoundedNoise", {"epsilon": e, "delta": d, "sensitivity": s}, epsilon=e, delta=d,
                      sensitivity=s, bounds=None, integer=False, bits=False, environment=environment)


def diffprivlib_uniform(*, delta: float = 0.1, sensitivity: float = 1.0, environment: str = ENVIRONMENT) -> Mechanism:
    """Return diffprivlib's `Uniform(delta, sensitivity)` on one query answer: its claim is (0, δ)."""
    name = "diffprivlib_uniform"
    d, s = check_real(delta, "delta", name, low=0.0, low_open=True, high=0.5), _positive(sensitivity, "sensitivity", name)
    return _mechanism(name, "Uniform", {"delta": d, "sensitivity": s}, epsilon=0.0, delta=d, sensitivity=s, bounds=None,
                      integer=False, bits=False, environment=environment)


def diffprivlib_exponential(*, epsilon: float = 1.0, sensitivity: float = 1.0, candidates: int = 3,
                            environment: str = ENVIRONMENT) -> Mechanism:
    """Return diffprivlib's `Exponential(epsilon, sensitivity, utility)`.randomise(): the dataset is the utility vector.

    Neighbours: utility vectors within `sensitivity` of each other in every
    entry. The default pair: zeros against the first utility raised by
    `sensitivity`. The output is the index of the candidate picked.
    """
    name = "diffprivlib_exponential"
    e, s = _positive(epsilon, "epsilon", name), _positive(sensitivity, "sensitivity", name)
    k = check_int(candidates, "candidates", name, low=2)
    d0 = np.zeros(k)
    d1 = d0.copy()
    d1[0] = s
    call = {"kind": "mechanism", "name": "Exponential", "params": {"epsilon": e, "sensitivity": s}}
    spec = _Spec(name, call, e, 0.0, Relation.ADD_REMOVE, (d0, d1), _answers(s, NumberRecords()),
                 f"Exponential(epsilon={e:g}, sensitivity={s:g}, utility=<dataset>).randomise() over {k} candidates")
    return _build(spec, environment)


def diffprivlib_binary(*, epsilon: float = 1.0, environment: str = ENVIRONMENT) -> Mechanism:
    """Return diffprivlib's `Binary(epsilon, value0="0", value1="1")`.randomise(value): randomised response on one bit."""
    name = "diffprivlib_binary"
    e = _positive(epsilon, "epsilon", name)
    domain = NumberRecords(0.0, 1.0, integer=False)
    call = {"kind": "mechanism", "name": "Binary", "params": {"epsilon": e}}
    spec = _Spec(name, call, e, 0.0, Relation.ADD_REMOVE, answer_pair(0.0, 1.0), _answers(1.0, domain),
                 f"Binary(epsilon={e:g}, value0='0', value1='1').randomise(bit)")
    return _build(spec, environment)


# ---- tools: diffprivlib.tools.NAME(records, epsilon=..., bounds=(lower, upper))


def _tool(name: str, tool: str, *, epsilon: float, lower: float, upper: float, n: int, environment: str,
          extra: dict[str, Any] | None = None) -> Mechanism:
    """Return `diffprivlib.tools.<tool>(records, epsilon, bounds or range, **extra)` on n records, claimed at ε."""
    e = _positive(epsilon, "epsilon", name)
    lo, hi = _bounds(lower, upper, name)
    size = check_int(n, "n", name, low=1)
    histogram = tool == "histogram"
    params: dict[str, Any] = {"epsilon": e, **({"range": [lo, hi]} if histogram else {"bounds": [lo, hi]}), **(extra or {})}
    if tool == "count_nonzero":
        del params["bounds"]
    nan = tool.startswith("nan")
    relation = Relation.ADD_REMOVE if histogram else Relation.REPLACE_ONE
    null = np.nan if nan else None
    check = by_relation(relation.value, null_record=null, records=NumberRecords(lo, hi))
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
    spec = _Spec(name, {"kind": "tool", "name": tool, "params": params}, e, 0.0, relation,
                 record_pair(lo, hi, size, added=histogram), check, f"tools.{tool}(records, {shown})",
                 records=BoxRecords(lo, hi), null_record=null)
    return _build(spec, environment)


def _tool_factory(tool: str, extra: dict[str, Any] | None = None, doc: str = "") -> Any:
    name = f"diffprivlib_{tool}"

    def factory(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0, n: int = 5,
                environment: str = ENVIRONMENT) -> Mechanism:
        return _tool(name, tool, epsilon=epsilon, lower=lower, upper=upper, n=n, environment=environment, extra=extra)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = (f"Return `diffprivlib.tools.{tool}` on n records in [lower, upper] as its docs call it; claim: the ε "
                       "passed." + (f"\n\n    {doc}" if doc else ""))
    return factory


_NAN = ("The nan-tools ignore NaN (a missing value, so a record here), yet calibrate to the length of the array "
        "with its NaN: a record replaced by NaN moves the answer further than the noise allows.")
TOOLS = (
    _tool_factory("mean"), _tool_factory("var"), _tool_factory("std"), _tool_factory("sum"),
    _tool_factory("nanmean", doc=_NAN), _tool_factory("nanvar", doc=_NAN), _tool_factory("nanstd", doc=_NAN),
    _tool_factory("nansum", doc=_NAN), _tool_factory("count_nonzero"),
    _tool_factory("histogram", {"bins": 4}, doc="Its counts over 4 bins of [lower, upper] (add/remove: one record adds 1 to one bin)."),
    _tool_factory("quantile", {"quant": 0.25}), _tool_factory("median"), _tool_factory("percentile", {"percent": 75}),
)


# ---- models: Model(**params).fit(X, y), releasing what the user reads back


def _model(name: str, model: str, params: dict[str, Any], *, epsilon: float, lower: float, upper: float, features: int,
           n: int, labels: int | None, environment: str, y_bounds: tuple[float, float] | None = (0.0, 1.0)) -> Mechanism:
    """Return `diffprivlib.models.<model>(**params).fit(X, y)` on n rows, claimed at ε (replace-one)."""
    size = check_int(n, "n", name, low=2)
    call = {"kind": "model", "name": model, "params": params, "labels": bool(labels), "classes": labels or 1,
            "supervised": bool(labels) or y_bounds is not None}
    pair = model_pair(lower, upper, features, size, labels, y_bounds)
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
    spec = _Spec(name, call, epsilon, 0.0, Relation.REPLACE_ONE, pair, _rows(lower, upper, features, labels, y_bounds),
                 f"models.{model}({shown}).fit(X, y) on {size} rows of {features} features")
    return _build(spec, environment)


def _box(lower: float, upper: float, features: int, owner: str) -> tuple[float, float, int, list[list[float]]]:
    lo, hi = _bounds(lower, upper, owner)
    d = check_int(features, "features", owner, low=1)
    return lo, hi, d, [[lo] * d, [hi] * d]


def _linear_regression(name: str, epsilon: float, lower: float, upper: float, features: int, n: int, environment: str,
                       fit_intercept: bool) -> Mechanism:
    e = _positive(epsilon, "epsilon", name)
    lo, hi, d, bounds = _box(lower, upper, features, name)
    params = {"epsilon": e, "bounds_X": bounds, "bounds_y": [0.0, 1.0], "fit_intercept": fit_intercept}
    return _model(name, "LinearRegression", params, epsilon=e, lower=lo, upper=hi, features=d, n=n, labels=None,
                  environment=environment)


def diffprivlib_linear_regression(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0, features: int = 2,
                                  n: int = 5, environment: str = ENVIRONMENT) -> Mechanism:
    """Return `LinearRegression(epsilon, bounds_X, bounds_y=(0, 1)).fit(X, y)` (its default fit_intercept=True): coef_, intercept_.

    The intercept centres X by a noisy mean first, so the bounds reaching
    the bug of `diffprivlib_linear_regression_no_intercept` are shifted
    away from 0 and the squared sums get some noise.
    """
    return _linear_regression("diffprivlib_linear_regression", epsilon, lower, upper, features, n, environment, True)


def diffprivlib_linear_regression_no_intercept(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0,
                                               features: int = 1, n: int = 5, environment: str = ENVIRONMENT) -> Mechanism:
    """FINDING: `LinearRegression(epsilon, bounds_X, bounds_y=(0, 1), fit_intercept=False).fit(X, y)`, releasing coef_.

    The sensitivity of each feature's sum of squares is computed from the
    lower bound twice (`_construct_regression_obj` in
    `models/linear_regression.py`, 0.6.6 line 144; 0.4.1 line 132), so with
    the lower bound 0 that term gets no noise at all (diffprivlib issue
    105, Cebere et al. PoPETS 2026). One feature by default: with two, the
    noise of the cross term (ε/6 each) hides it at 200 trials (docs/libraries.md).
    """
    return _linear_regression("diffprivlib_linear_regression_no_intercept", epsilon, lower, upper, features, n,
                              environment, False)


def diffprivlib_logistic_regression(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0, features: int = 2,
                                    classes: int = 3, n: int = 6, environment: str = ENVIRONMENT) -> Mechanism:
    """Return `LogisticRegression(epsilon, data_norm).fit(X, y)`, releasing len(classes_), coef_ and intercept_.

    data_norm is the largest norm of a row in the feature box. Labels are
    0 .. classes − 1. FINDING: the classes are read from the data
    (`np.unique(y)` in `models/logistic_regression.py`), so a label only
    one record has changes the model's shape (diffprivlib issue 106).
    """
    name = "diffprivlib_logistic_regression"
    e = _positive(epsilon, "epsilon", name)
    lo, hi, d, _ = _box(lower, upper, features, name)
    k = check_int(classes, "classes", name, low=2)
    norm = float(np.sqrt(d) * max(abs(lo), abs(hi)))
    return _model(name, "LogisticRegression", {"epsilon": e, "data_norm": norm}, epsilon=e, lower=lo, upper=hi,
                  features=d, n=n, labels=k, environment=environment)


def diffprivlib_gaussian_nb(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0, features: int = 2,
                            classes: int = 3, n: int = 6, environment: str = ENVIRONMENT) -> Mechanism:
    """Return `GaussianNB(epsilon, bounds).fit(X, y)`: len(classes_), theta_, var_, class_count_ padded to `classes` labels.

    diffprivlib 0.6.6's GaussianNB takes no `classes`: `fit` reads them
    from the data (`np.unique(y)`), so the shapes released depend on the labels present.
    """
    name = "diffprivlib_gaussian_nb"
    e = _positive(epsilon, "epsilon", name)
    lo, hi, d, bounds = _box(lower, upper, features, name)
    k = check_int(classes, "classes", name, low=2)
    return _model(name, "GaussianNB", {"epsilon": e, "bounds": bounds}, epsilon=e, lower=lo, upper=hi, features=d, n=n,
                  labels=k, environment=environment)


def _unsupervised(name: str, model: str, extra: dict[str, Any], doc: str) -> Any:
    def factory(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0, features: int = 2, n: int = 5,
                environment: str = ENVIRONMENT) -> Mechanism:
        e = _positive(epsilon, "epsilon", name)
        lo, hi, d, bounds = _box(lower, upper, features, name)
        params = {"epsilon": e, "bounds": bounds, **extra}
        if model == "PCA":
            params["data_norm"] = float(np.sqrt(d) * max(abs(lo), abs(hi)))
        return _model(name, model, params, epsilon=e, lower=lo, upper=hi, features=d, n=n, labels=None,
                      environment=environment, y_bounds=None)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"Return `{model}(epsilon, bounds, ...).fit(X)` on n rows in the feature box, releasing {doc}."
    return factory


MODELS = (
    diffprivlib_linear_regression, diffprivlib_linear_regression_no_intercept, diffprivlib_logistic_regression, diffprivlib_gaussian_nb,
    _unsupervised("diffprivlib_kmeans", "KMeans", {"n_clusters": 2}, "cluster_centers_"),
    _unsupervised("diffprivlib_pca", "PCA", {"n_components": 1}, "components_ and explained_variance_ (data_norm: the box's largest norm)"),
    _unsupervised("diffprivlib_standard_scaler", "StandardScaler", {}, "mean_ and var_"),
)


# Registration builds nothing (the environment is built when a mechanism is). Costs: ~25 µs a noise draw,
# ~0.5-1.5 ms a tool call, 5-30 ms a model fit on one BLAS thread (0.6 s without the intercept: D2) in the side process.
# LogisticRegression's and GaussianNB's label set (D3) is certified at 200 fits; the suite gives models 500.
_VIOLATIONS = {"diffprivlib_laplace_bits", "diffprivlib_gaussian_analytic_bits", "diffprivlib_linear_regression_no_intercept",
               "diffprivlib_logistic_regression", "diffprivlib_gaussian_nb"}
for _factory, _cost in ([(f, 0.1) for f in NOISE]
                        + [(diffprivlib_laplace_bounded_noise, 0.1), (diffprivlib_uniform, 0.1),
                           (diffprivlib_exponential, 0.1), (diffprivlib_binary, 0.1)]
                        + [(f, 0.01) for f in TOOLS]
                        + [(f, 0.0005) for f in MODELS]):
    _expected = "violation" if _factory.__name__ in _VIOLATIONS else "consistent"
    register(_factory.__name__, expected=_expected, suite_trials=_cost, environment=ENVIRONMENT)(_factory)
