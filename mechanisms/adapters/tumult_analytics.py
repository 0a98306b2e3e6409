"""Adapters that audit Tumult Analytics queries (Session, QueryBuilder) in Analytics' own environment (registered only when it exists).

Tumult Analytics 0.21 installs with Tumult Core 0.19 (and numpy 1.26,
pandas 1.5, pyspark 3.5), so it cannot share dpaudit's environment, nor
`tumult-core`, whose Core 0.20 the `tumult_*` adapters audit: `make
tumult-analytics` builds an environment of its own, and these adapters run
Analytics there as a black box (`external_python`), through
`tumult_analytics_side.py` (which see). The interpreter is
$DPAUDIT_TUMULT_ANALYTICS_PYTHON when that is set (nothing is registered if
it names no runnable file), else that of the declared library environment
`tumult-analytics` once it is built (`dpaudit env create tumult-analytics`,
or `make tumult-analytics`; Spark needs Java, which the build checks): as
for Core, the adapters are registered only then and never build it.
Registering runs nothing.

Each adapter is a query people write: `QueryBuilder("records").count()`,
`.sum("x", lower, upper)`, `.average(...)`, `.quantile("x", q, lower,
upper)`, `.groupby(KeySet.from_dict({"group": [0, .., groups - 1]})).count()`,
evaluated with the whole budget of a Session made with
`Session.from_dataframe(budget, "records", df, protected_change=AddOneRow())`.

- **Claim**: the budget given to the Session, as the Session reports it
  (`remaining_privacy_budget`): ε for a PureDPBudget; for a RhoZCDPBudget,
  ρ and the ε of Tumult's own zCDP conversion at δ = 1e-5, ρ + 2√(ρ log(1/δ))
  (Bun & Steinke 2016, Prop. 1.3; the conversion the `tumult_*` adapters use).
- **Upper bound**: dpaudit's, from the noise Analytics lists for the query
  (`Session._noise_info`: the mechanism and parameter of each noise draw)
  and dpaudit's own sensitivity of the query for one record added or removed
  (a sum's max(|lower|, |upper|); an average's sum of deviations from the
  midpoint, (upper − lower)/2, and its count, 1). The quantile's noise is the
  exponential mechanism at the ε Analytics lists (√(8ρ) under zCDP), which is
  ε-DP (McSherry & Talwar 2007, with Tumult's utility sensitivity max(q, 1 − q)).
- **Relation**: one record added or removed (Analytics' AddOneRow; `nan`
  marks the absent record in dpaudit's datasets). A record is a number (the
  column `x`), or a group label 0 .. groups − 1 for the grouped count.
- **Draws**: one batch of N outputs is one `Session.evaluate` on N copies of
  the dataset grouped by a public `copy` key (tumult_analytics_side.py
  checks that Analytics calibrates the copies' noise as the single query's).
  Every Analytics query goes to one long-lived process per interpreter,
  which also answers the `describe` requests, so Spark starts once a run
  (under a minute with the first Session; then, in batches of 5,000,
  0.6–1.5 ms an output for counts and sums, 1.7–3.9 ms for the average,
  4.4–5.1 ms for the quantile, which runs the exponential mechanism per
  group in pandas; docs/libraries.md). Tumult's generator has no public
  seed, so an audit does not repeat bit for bit (soundness is unaffected).

The buggy variants are mistakes a user of the Session API can make, each
audited against the claim the user would report: a Session given more
budget than the claim (`budget_factor`), a table holding each record
`rows_per_record` times (as after a join) while the Session protects
AddOneRow, and a KeySet read from the private data.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from dpaudit.errors import MechanismError
from dpaudit.mechanisms.adapters.tumult_core import Requests, absent, interpreter, one_row_added, registered_environment
from dpaudit.mechanisms.base import Mechanism, Relation
from dpaudit.mechanisms.builtins.statistics import present_records
from dpaudit.mechanisms.environments import Environment, declare
from dpaudit.mechanisms.external.processes import ExternalProcess, external_python
from dpaudit.mechanisms.neighbours import NeighbourCheck
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

if TYPE_CHECKING:
    from dp_accounting import dp_event

ENVIRONMENT_VARIABLE = "DPAUDIT_TUMULT_ANALYTICS_PYTHON"
ENVIRONMENT = declare(Environment(
    name="tumult-analytics",
    packages=("tmlt.analytics==0.21.*",),  # with Tumult Core 0.19.1, numpy 1.26.4, pandas 1.5.3, pyspark 3.5
    python="3.11",
    description="Tumult Analytics 0.21 (the tumult_analytics_* adapters); Spark, which needs Java",
    check="import tmlt.analytics",
    needs=("java",),
))
GAUSSIAN_DELTA = 1e-5
SIDE = Path(__file__).resolve().parents[1] / "scripts" / "tumult_analytics_side.py"
BATCH_TIMEOUT = 3600.0  # seconds for one batch: up to 250,000 quantiles at ~5 ms each (Spark's start-up included)


def tumult_analytics_python() -> str | None:
    """Return the interpreter of Analytics' environment ($DPAUDIT_TUMULT_ANALYTICS_PYTHON, else the built `tumult-analytics`), or None."""
    return interpreter(ENVIRONMENT_VARIABLE, ENVIRONMENT.name)


@functools.lru_cache(maxsize=None)
def _process(python: str) -> ExternalProcess:
    """Return the one Analytics process of `python` (`tumult_analytics_side:serve`), shared by every adapter of this process.

    Closing any Analytics mechanism stops it; the next request starts it again (and Spark with it).
    """
    shell = external_python(python, "tumult_analytics_side:serve", epsilon=1.0, name="Tumult Analytics", timeout=BATCH_TIMEOUT,
                            path=[str(SIDE.parent)], check=False)
    return shell.sampler


@functools.lru_cache(maxsize=64)
def _describe(python: str, kind: str, params_json: str) -> dict[str, Any]:
    """Return what Analytics states for the query `kind` with `params_json`: its budget and noise (`tumult_analytics_side.describe`)."""
    request = {"kind": ["describe"], "query": [kind], "params": [params_json]}
    reply = _process(python)(request, 1, np.random.default_rng(0))
    return json.loads(str(reply[0]))


@dataclasses.dataclass(frozen=True)
class _Spec:
    """One adapter: the query, the budget stated (the claim) and the one the Session gets, the dataset's reading, the bug."""

    name: str
    kind: str
    query: dict[str, Any]  # the query's parameters sent to Analytics: bounds, quantile, groups, keys
    budget: dict[str, Any]  # the claim: {"epsilon": ε} or {"rho": ρ, "delta": δ}
    pair: tuple[np.ndarray, np.ndarray]
    neighbours: NeighbourCheck
    budget_factor: float = 1.0  # the Session gets this multiple of the claimed budget
    repeat: int = 1  # rows of the table per record
    bits: bool = False


def _scaled(budget: dict[str, Any], factor: float) -> dict[str, Any]:
    """Return `budget` with its ε or ρ multiplied by `factor` (δ kept)."""
    key = "rho" if "rho" in budget else "epsilon"
    return {**budget, key: budget[key] * factor}


def _build(spec: _Spec, event_of: Callable[[list[dict[str, Any]]], dp_event.DpEvent], text: str) -> Mechanism:
    """Return the mechanism of `spec`: the claimed budget as Analytics states it, dpaudit's event from the noise of the Session run."""
    python = tumult_analytics_python()
    if python is None:
        raise absent("Tumult Analytics", ENVIRONMENT_VARIABLE, ENVIRONMENT.name)
    session = {**spec.query, **_scaled(spec.budget, spec.budget_factor)}
    claimed = _describe(python, spec.kind, json.dumps({**spec.query, **spec.budget}, sort_keys=True))
    ran = claimed if spec.budget_factor == 1.0 else _describe(python, spec.kind, json.dumps(session, sort_keys=True))
    mech = external_python(  # the mechanism's claim, pair and relation; its draws go to the shared process
        python, f"tumult_analytics_side:{spec.kind}", epsilon=claimed["epsilon"], delta=claimed["delta"],
        relation=Relation.ADD_REMOVE, name=spec.name, default_pair=spec.pair, neighbours=spec.neighbours,
        timeout=BATCH_TIMEOUT, path=[str(SIDE.parent)], check=False,
    )
    groups = spec.query.get("groups")
    sampler = Requests(_process(python), spec.kind, session, records=True, repeat=spec.repeat, bits=spec.bits,
                       groups=groups)
    facts = {"tmlt_analytics": ran["tmlt_analytics"], "tmlt_core": ran["tmlt_core"], "session_budget": {ran["budget"]: _amount(ran)},
             "noise": [f"{n['mechanism']}({n['parameter']:g})" for n in ran["noise"]]}
    return dataclasses.replace(
        mech, sampler=sampler, event=event_of(ran["noise"]), null_record=np.nan,  # NaN: an absent row, as its check says
        params={**spec.budget, **_inputs(spec), **facts},
        description=f"Tumult Analytics {ran['tmlt_analytics']} (Core {ran['tmlt_core']}): {text} (run in {python}; Tumult's own RNG).",
    )


def _amount(described: dict[str, Any]) -> float:
    return described["rho"] if "rho" in described else described["epsilon"]


def _inputs(spec: _Spec) -> dict[str, Any]:
    """Return the query's parameters (the grouped count's `keys`: "public" or "private") and the bug's, as the params show them."""
    bug = {"budget_factor": spec.budget_factor} if spec.budget_factor != 1.0 else {}
    return {**spec.query, **bug, **({"rows_per_record": spec.repeat} if spec.repeat != 1 else {})}


# ---- dpaudit's events from the noise Analytics lists


def _noise_event(noise: dict[str, Any], sensitivity: float) -> dp_event.DpEvent:
    """Return the event of one noise draw Analytics lists, added to a value of `sensitivity` (one record added or removed).

    LAPLACE scale b: Laplace at b/Δ. GAUSSIAN σ²: Gaussian at σ/Δ. GEOMETRIC α:
    discrete Laplace with parameter 1/α (mass ∝ e^{−|k|/α}), integer Δ.
    DISCRETE_GAUSSIAN σ²: discrete Gaussian at σ, integer Δ.
    """
    from dp_accounting import dp_event
    from dpaudit.mechanisms.events import DiscreteGaussianDpEvent

    mechanism, parameter = noise["mechanism"], float(noise["parameter"])
    if mechanism == "LAPLACE":
        return dp_event.LaplaceDpEvent(noise_multiplier=parameter / sensitivity)
    if mechanism == "GAUSSIAN":
        return dp_event.GaussianDpEvent(noise_multiplier=float(np.sqrt(parameter)) / sensitivity)
    if mechanism == "GEOMETRIC":
        return dp_event.DiscreteLaplaceDpEvent(noise_parameter=1.0 / parameter, sensitivity=int(sensitivity))
    if mechanism == "DISCRETE_GAUSSIAN":
        return DiscreteGaussianDpEvent(sigma=float(np.sqrt(parameter)), sensitivity=int(sensitivity))
    raise MechanismError(f"Tumult Analytics listed noise dpaudit has no analysis for here: {mechanism}({parameter:g}).")


def _events(sensitivities: Sequence[float]) -> Callable[[list[dict[str, Any]]], dp_event.DpEvent]:
    """Return noise list ↦ the composition of its draws, the i-th added to a value of sensitivity `sensitivities[i]`."""
    from dp_accounting import dp_event

    def event(noise: list[dict[str, Any]]) -> dp_event.DpEvent:
        if len(noise) != len(sensitivities):
            raise MechanismError(f"Tumult Analytics listed {len(noise)} noise draws where dpaudit expects {len(sensitivities)}: {noise}.")
        parts = [_noise_event(n, s) for n, s in zip(noise, sensitivities)]
        return parts[0] if len(parts) == 1 else dp_event.ComposedDpEvent(parts)

    return event


def _exponential(repeat: int) -> Callable[[list[dict[str, Any]]], dp_event.DpEvent]:
    """Return noise list ↦ the exponential mechanism's pure ε-DP at the ε listed, for `repeat` rows a record (group privacy)."""
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent, GroupDpEvent

    def event(noise: list[dict[str, Any]]) -> dp_event.DpEvent:
        if len(noise) != 1 or noise[0]["mechanism"] != "EXPONENTIAL":
            raise MechanismError(f"Tumult Analytics listed {noise} for a quantile, where dpaudit expects one EXPONENTIAL draw.")
        inner = EpsilonDeltaDpEvent(float(noise[0]["parameter"]))
        return inner if repeat == 1 else GroupDpEvent(inner, repeat)

    return event


def _non_private(noise: list[dict[str, Any]]) -> dp_event.DpEvent:
    from dp_accounting import dp_event

    return dp_event.NonPrivateDpEvent()


# ---- parameters and pairs


def _pure(epsilon: float, owner: str) -> dict[str, Any]:
    return {"epsilon": check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)}


def _zcdp(rho: float, delta: float, owner: str) -> dict[str, Any]:
    return {"rho": check_real(rho, "rho", owner, low=0.0, low_open=True),
            "delta": check_real(delta, "delta", owner, low=0.0, low_open=True, high=1.0, high_open=True)}


def _bounds(lower: float, upper: float, owner: str) -> dict[str, float]:
    lo = check_real(lower, "lower", owner)
    return {"lower": lo, "upper": check_real(upper, "upper", owner, low=lo, low_open=True)}


def _records() -> NeighbourCheck:
    return present_records(-np.inf, np.inf)


def _mid_and_extreme(bounds: dict[str, float]) -> tuple[float, float]:
    """Return the midpoint of the bounds and the bound of largest magnitude."""
    lo, hi = bounds["lower"], bounds["upper"]
    return (lo + hi) / 2, lo if abs(lo) > abs(hi) else hi


# ---- the queries


def _count(name: str, budget: dict[str, Any], *, factor: float = 1.0, repeat: int = 1) -> Mechanism:
    """`QueryBuilder("records").count()`: one record changes the count by `repeat` (the rows it fills)."""
    spec = _Spec(name, "count", {}, budget, one_row_added(0.0, 0.0), _records(), budget_factor=factor, repeat=repeat)
    return _build(spec, _events([repeat]), "QueryBuilder.count()" + _story(spec))


def _sum(name: str, budget: dict[str, Any], bounds: dict[str, float], *, factor: float = 1.0, repeat: int = 1,
         bits: bool = False) -> Mechanism:
    """`.sum("x", lower, upper)`: sensitivity max(|lower|, |upper|) a row; worst case the bound of largest magnitude
    added to rows at the midpoint."""
    mid, extreme = _mid_and_extreme(bounds)
    spec = _Spec(name, "sum", bounds, budget, one_row_added(mid, extreme), _records(), budget_factor=factor, repeat=repeat,
                 bits=bits)
    sensitivity = repeat * max(abs(bounds["lower"]), abs(bounds["upper"]))
    event = _non_private if bits else _events([sensitivity])
    text = f"QueryBuilder.sum(\"x\", {bounds['lower']:g}, {bounds['upper']:g})" + _story(spec)
    return _build(spec, event, text + ("; the output's IEEE-754 bits" if bits else ""))


def _story(spec: _Spec) -> str:
    """Return what a buggy spec does differently, as a clause of the description ('' for a correct one)."""
    parts = []
    if spec.budget_factor != 1.0:
        parts.append(f"the Session given {spec.budget_factor:g} times the claimed budget")
    if spec.repeat != 1:
        parts.append(f"each record {spec.repeat} rows of the table while the Session protects AddOneRow")
    if spec.query.get("keys") == "private":
        parts.append("the KeySet read from the private data")
    return "".join(f"; {p}" for p in parts)


def _average(name: str, budget: dict[str, Any], bounds: dict[str, float], pair: tuple[np.ndarray, np.ndarray], *,
             factor: float = 1.0, repeat: int = 1) -> Mechanism:
    """`.average("x", lower, upper)`: Analytics releases midpoint + (noisy sum of deviations)/max(1, noisy count),
    each at half the budget (Core's create_average_measurement, which lists the sum's noise first): one row
    changes the sum of deviations by at most (upper − lower)/2 and the count by 1."""
    spec = _Spec(name, "average", bounds, budget, pair, _records(), budget_factor=factor, repeat=repeat)
    deviation = (bounds["upper"] - bounds["lower"]) / 2
    text = f"QueryBuilder.average(\"x\", {bounds['lower']:g}, {bounds['upper']:g})" + _story(spec)
    return _build(spec, _events([repeat * deviation, repeat]), text)


def _quantile_pair(bounds: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Return {lower} against {lower, b}, b a fifth of the range below the upper bound.

    Tumult's exponential mechanism weights the intervals between the sorted
    rows (empty ones dropped) by length × exp(−ε|rank − qn|/(2 max(q, 1 − q)))
    and draws uniformly within the one it picks. For the median, {lower}
    gives one interval, [lower, upper]: a uniform draw. {lower, b} favours
    [lower, b] over [b, upper] by e^ε, so P(output > b) falls from 1 − p to
    (1 − p)e^{−ε}/(p + (1 − p)e^{−ε}), p = (b − lower)/(upper − lower) = 0.8:
    a privacy loss of ε + log(p + (1 − p)e^{−ε}) on that tail (0.865 at
    ε = 1), which tends to ε as p → 1; a fifth of the draws there lets the
    audit measure it at a few thousand trials. One-sided, so a threshold test finds it.
    """
    lo, hi = bounds["lower"], bounds["upper"]
    b = hi - 0.2 * (hi - lo)
    return np.array([np.nan, lo]), np.array([b, lo])


def _quantile(name: str, budget: dict[str, Any], bounds: dict[str, float], q: float, *, factor: float = 1.0,
              repeat: int = 1) -> Mechanism:
    """`.quantile("x", q, lower, upper)`: the exponential mechanism at the ε Analytics lists (ε, or √(8ρ) under zCDP)."""
    query = {**bounds, "quantile": check_real(q, "quantile", name, low=0.0, high=1.0)}
    spec = _Spec(name, "quantile", query, budget, _quantile_pair(bounds), _records(), budget_factor=factor, repeat=repeat)
    text = f"QueryBuilder.quantile(\"x\", {q:g}, {bounds['lower']:g}, {bounds['upper']:g})" + _story(spec)
    return _build(spec, _exponential(repeat), text)


def _grouped_pair(groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Return four records in groups 0 .. groups − 2 and an absent one, against the same with a record of group groups − 1."""
    present = [float(i % max(1, groups - 1)) for i in range(4)]
    return np.array([np.nan, *present]), np.array([float(groups - 1), *present])


def _grouped_count(name: str, budget: dict[str, Any], groups: int, *, keys: str = "public", factor: float = 1.0,
                   repeat: int = 1) -> Mechanism:
    """`.groupby(KeySet.from_dict({"group": [0, .., groups − 1]})).count()`: one record changes one group's count.

    With `keys` = "private", the KeySet is `KeySet.from_dataframe` of the
    private table's groups: whether a group appears then depends on the data
    (no privacy), as the default pair shows: its added record is the only one of its group.
    """
    k = check_int(groups, "groups", name, low=1)
    query = {"groups": k, "keys": keys}
    spec = _Spec(name, "grouped_count", query, budget, _grouped_pair(k), present_records(0.0, k - 1.0), budget_factor=factor,
                 repeat=repeat)
    event = _non_private if keys == "private" else _events([repeat])
    return _build(spec, event, f"QueryBuilder.groupby(KeySet of {k} groups).count()" + _story(spec))


# ---- the adapters: count


def tumult_analytics_count(*, epsilon: float = 1.0) -> Mechanism:
    """Return `QueryBuilder("records").count()` in a Session with PureDPBudget(ε); claim ε.

    Analytics adds geometric noise (α = 1/ε). Worst case: one record added
    to four. Upper bound: the discrete Laplace profile at the α Analytics lists.
    """
    return _count("tumult_analytics_count", _pure(epsilon, "tumult_analytics_count"))


def tumult_analytics_count_zcdp(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA) -> Mechanism:
    """Return `QueryBuilder("records").count()` in a Session with RhoZCDPBudget(ρ); claim Tumult's conversion at δ.

    Analytics adds discrete Gaussian noise (σ² = 1/(2ρ)). Upper bound: the
    discrete Gaussian's profile at the σ² Analytics lists (dp_accounting's PLD).
    """
    return _count("tumult_analytics_count_zcdp", _zcdp(rho, delta, "tumult_analytics_count_zcdp"))


def _rows(rows_per_record: int, owner: str) -> int:
    return check_int(rows_per_record, "rows_per_record", owner, low=2)


def tumult_analytics_count_duplicated_rows(*, epsilon: float = 1.0, rows_per_record: int = 2) -> Mechanism:
    """BUGGY: `tumult_analytics_count` on a table holding each record `rows_per_record` times, the Session told AddOneRow.

    As after a join that gives each person two rows: the protected change
    should be AddMaxRows(2) (or AddRowsWithID). One record moves the count
    by 2 against noise calibrated for 1: true ε = 2ε, dpaudit's upper bound.
    """
    owner = "tumult_analytics_count_duplicated_rows"
    return _count(owner, _pure(epsilon, owner), repeat=_rows(rows_per_record, owner))


def tumult_analytics_count_zcdp_duplicated_rows(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA,
                                                rows_per_record: int = 4) -> Mechanism:
    """BUGGY: `tumult_analytics_count_zcdp` on a table holding each record `rows_per_record` times, the Session told AddOneRow.

    One record moves the count by 4 against σ = 4: the profile of σ = 1 at
    sensitivity 1, 4.39 at δ = 1e-5, against the claim 1.231.
    """
    owner = "tumult_analytics_count_zcdp_duplicated_rows"
    return _count(owner, _zcdp(rho, delta, owner), repeat=_rows(rows_per_record, owner))


# ---- sum


def tumult_analytics_sum(*, epsilon: float = 1.0, lower: float = -2.0, upper: float = 1.0) -> Mechanism:
    """Return `QueryBuilder("records").sum("x", lower, upper)` of a float column, PureDPBudget(ε); claim ε.

    Analytics clamps each row to [lower, upper] and adds Laplace noise.
    Worst case: the bound of largest magnitude added to rows at the
    midpoint. Upper bound: the Laplace profile at the scale Analytics lists
    over dpaudit's own sensitivity, max(|lower|, |upper|).
    """
    owner = "tumult_analytics_sum"
    return _sum(owner, _pure(epsilon, owner), _bounds(lower, upper, owner))


def tumult_analytics_sum_zcdp(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA, lower: float = -2.0,
                              upper: float = 1.0) -> Mechanism:
    """Return `.sum("x", lower, upper)` of a float column in a Session with RhoZCDPBudget(ρ); claim Tumult's conversion at δ.

    Analytics adds Gaussian noise. Upper bound: the exact Gaussian profile at
    σ/Δ, σ² as Analytics lists it and Δ = max(|lower|, |upper|), outputs taken as reals.
    """
    owner = "tumult_analytics_sum_zcdp"
    return _sum(owner, _zcdp(rho, delta, owner), _bounds(lower, upper, owner))


def _factor(budget_factor: float, owner: str) -> float:
    return check_real(budget_factor, "budget_factor", owner, low=1.0, low_open=True)


def tumult_analytics_sum_budget_too_large(*, epsilon: float = 1.0, lower: float = -2.0, upper: float = 1.0,
                                          budget_factor: float = 2.0) -> Mechanism:
    """BUGGY: `tumult_analytics_sum` claiming ε while the Session (and the query) get `budget_factor` × ε.

    As when a report states each query's share of a budget and one query is
    evaluated with the whole of it. True ε = 2ε, dpaudit's upper bound from the noise listed.
    """
    owner = "tumult_analytics_sum_budget_too_large"
    return _sum(owner, _pure(epsilon, owner), _bounds(lower, upper, owner), factor=_factor(budget_factor, owner))


def tumult_analytics_sum_zcdp_budget_too_large(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA, lower: float = -2.0,
                                               upper: float = 1.0, budget_factor: float = 16.0) -> Mechanism:
    """BUGGY: `tumult_analytics_sum_zcdp` claiming ρ while the Session gets `budget_factor` × ρ (a 16-query plan's budget on one).

    σ shrinks 4 times, from 8 to 2 at Δ = 2: the Gaussian profile at σ/Δ = 1,
    4.38 at δ = 1e-5, against the claim 1.231. (Tumult's zCDP conversion is
    loose, so a smaller overspend hides under the claim at the suite's trials.)
    """
    owner = "tumult_analytics_sum_zcdp_budget_too_large"
    return _sum(owner, _zcdp(rho, delta, owner), _bounds(lower, upper, owner), factor=_factor(budget_factor, owner))


def tumult_analytics_sum_zcdp_bits(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA, lower: float = -2.0,
                                   upper: float = 1.0) -> Mechanism:
    """FINDING (leaks): `tumult_analytics_sum_zcdp` released as the exact double's IEEE-754 bits.

    Analytics' Gaussian sum is Tumult Core's create_sum_measurement with
    AddGaussianNoise, which in Core 0.19.1 as in 0.20 returns
    `float(value + gaussian(0, σ²))`: the noise is a correctly rounded
    double, added in floating point (F4 in docs/libraries.md,
    `tumult_gaussian_sum_bits`). At the default pair the sums are −2 and
    −4; outputs in (−1, 1) are then multiples of 2^-52 and 2^-51. Upper
    bound: none (non-private event), as for `tumult_gaussian_sum_bits`.
    """
    owner = "tumult_analytics_sum_zcdp_bits"
    return _sum(owner, _zcdp(rho, delta, owner), _bounds(lower, upper, owner), bits=True)


# ---- average


def _average_pair(bounds: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Return two records at the lower bound and an absent one, against the same with a record at the upper bound.

    Of the pairs compared (docs/libraries.md: records at the midpoint or at a
    bound, with the other bound or the same one added, none to six records
    present), the one certifying most.
    """
    lo, hi = bounds["lower"], bounds["upper"]
    return np.array([np.nan, lo, lo]), np.array([hi, lo, lo])


def tumult_analytics_average(*, epsilon: float = 1.0, lower: float = -2.0, upper: float = 1.0) -> Mechanism:
    """Return `QueryBuilder("records").average("x", lower, upper)` of a float column, PureDPBudget(ε); claim ε.

    Analytics gives ε/2 to a Laplace sum of deviations from the midpoint and
    ε/2 to a Laplace count, and releases midpoint + sum/max(1, count). Upper
    bound: the two Laplace releases composed, at the scales Analytics lists.
    """
    owner = "tumult_analytics_average"
    bounds = _bounds(lower, upper, owner)
    return _average(owner, _pure(epsilon, owner), bounds, _average_pair(bounds))


def tumult_analytics_average_zcdp(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA, lower: float = -2.0,
                                  upper: float = 1.0) -> Mechanism:
    """Return `.average("x", lower, upper)` of a float column in a Session with RhoZCDPBudget(ρ); claim Tumult's conversion at δ.

    ρ/2 to a Gaussian sum of deviations, ρ/2 to a Gaussian count. Upper
    bound: the two Gaussian releases composed (exact, μ-GDP composition).
    """
    owner = "tumult_analytics_average_zcdp"
    bounds = _bounds(lower, upper, owner)
    return _average(owner, _zcdp(rho, delta, owner), bounds, _average_pair(bounds))


def tumult_analytics_average_duplicated_rows(*, epsilon: float = 1.0, lower: float = -2.0, upper: float = 1.0,
                                             rows_per_record: int = 2) -> Mechanism:
    """BUGGY: `tumult_analytics_average` on a table holding each record `rows_per_record` times, the Session told AddOneRow.

    One record moves the sum of deviations by 2 × 1.5 and the count by 2:
    true ε = 2ε, dpaudit's upper bound (the two Laplace releases at twice the sensitivity).
    """
    owner = "tumult_analytics_average_duplicated_rows"
    bounds = _bounds(lower, upper, owner)
    return _average(owner, _pure(epsilon, owner), bounds, _average_pair(bounds), repeat=_rows(rows_per_record, owner))


def tumult_analytics_average_zcdp_duplicated_rows(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA, lower: float = -2.0,
                                                  upper: float = 1.0, rows_per_record: int = 8) -> Mechanism:
    """BUGGY: `tumult_analytics_average_zcdp` on a table holding each record `rows_per_record` times, the Session told AddOneRow.

    The two Gaussian releases at 8 times their sensitivity: μ = 2, 10.0 at
    δ = 1e-5, against the claim 1.231. Eight rows leave the suite's audit a
    wide margin: an average's ratio hides much of what its two noisy parts
    show (at 4 rows, μ = 1 and 4.38, the bound certified stays near the
    claim; docs/libraries.md).
    """
    owner = "tumult_analytics_average_zcdp_duplicated_rows"
    bounds = _bounds(lower, upper, owner)
    return _average(owner, _zcdp(rho, delta, owner), bounds, _average_pair(bounds), repeat=_rows(rows_per_record, owner))


# ---- quantile


def tumult_analytics_quantile(*, epsilon: float = 1.0, quantile: float = 0.5, lower: float = -2.0, upper: float = 1.0) -> Mechanism:
    """Return `QueryBuilder("records").quantile("x", quantile, lower, upper)`, PureDPBudget(ε); claim ε.

    Analytics runs the exponential mechanism at ε (Core's NoisyQuantile).
    Upper bound: its pure ε. The default pair is a worst case for the median
    (`_quantile_pair`); for another quantile it is a valid pair, not
    necessarily the worst.
    """
    owner = "tumult_analytics_quantile"
    return _quantile(owner, _pure(epsilon, owner), _bounds(lower, upper, owner), quantile)


def tumult_analytics_quantile_zcdp(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA, quantile: float = 0.5, lower: float = -2.0,
                                   upper: float = 1.0) -> Mechanism:
    """Return `.quantile("x", quantile, lower, upper)` in a Session with RhoZCDPBudget(ρ); claim Tumult's conversion at δ.

    Analytics runs the exponential mechanism at ε = √(8ρ) (0.5 at ρ = 1/32),
    which is ρ-zCDP (Cesar & Rogers 2021) and also ε-DP: dpaudit's upper
    bound is that pure ε, well below the claim Tumult's conversion of ρ gives.
    """
    owner = "tumult_analytics_quantile_zcdp"
    return _quantile(owner, _zcdp(rho, delta, owner), _bounds(lower, upper, owner), quantile)


def tumult_analytics_quantile_budget_too_large(*, epsilon: float = 1.0, quantile: float = 0.5, lower: float = -2.0,
                                               upper: float = 1.0, budget_factor: float = 2.0) -> Mechanism:
    """BUGGY: `tumult_analytics_quantile` claiming ε while the Session (and the query) get `budget_factor` × ε.

    The exponential mechanism at 2ε: true ε = 2ε, dpaudit's upper bound; the
    default pair's loss is 2 + log(0.8 + 0.2e^{−2}) = 1.81 at ε = 1.
    """
    owner = "tumult_analytics_quantile_budget_too_large"
    return _quantile(owner, _pure(epsilon, owner), _bounds(lower, upper, owner), quantile, factor=_factor(budget_factor, owner),)


def tumult_analytics_quantile_zcdp_duplicated_rows(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA, quantile: float = 0.5,
                                                   lower: float = -2.0, upper: float = 1.0, rows_per_record: int = 8) -> Mechanism:
    """BUGGY: `tumult_analytics_quantile_zcdp` on a table holding each record `rows_per_record` times, the Session told AddOneRow.

    Group privacy bounds it by 8√(8ρ) = 4; at the default pair ({lower} ×
    8 against it with b × 8 added) the ranks move by 8, so the loss on the
    tail is 4 + log(0.8 + 0.2e^{−4}) = 3.78, against the claim 1.231.
    """
    owner = "tumult_analytics_quantile_zcdp_duplicated_rows"
    return _quantile(owner, _zcdp(rho, delta, owner), _bounds(lower, upper, owner), quantile, repeat=_rows(rows_per_record, owner),)


# ---- grouped count


def tumult_analytics_grouped_count(*, epsilon: float = 1.0, groups: int = 3) -> Mechanism:
    """Return `QueryBuilder("records").groupby(KeySet.from_dict({"group": [0, .., groups − 1]})).count()`, PureDPBudget(ε).

    A record is a group label (`nan`: absent); the output is the vector of
    noisy counts, one per group, each with geometric noise at α = 1/ε. One
    record changes one count by 1: the upper bound is the discrete Laplace
    profile at the α Analytics lists.
    """
    return _grouped_count("tumult_analytics_grouped_count", _pure(epsilon, "tumult_analytics_grouped_count"), groups)


def tumult_analytics_grouped_count_zcdp(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA, groups: int = 3) -> Mechanism:
    """Return the grouped count over a public KeySet in a Session with RhoZCDPBudget(ρ): discrete Gaussian noise per group.

    Upper bound: the discrete Gaussian's profile at the σ² Analytics lists (one record changes one count by 1).
    """
    owner = "tumult_analytics_grouped_count_zcdp"
    return _grouped_count(owner, _zcdp(rho, delta, owner), groups)


def tumult_analytics_grouped_count_private_keys(*, epsilon: float = 1.0, groups: int = 3) -> Mechanism:
    """BUGGY: `tumult_analytics_grouped_count` over `KeySet.from_dataframe` of the private table's groups, not a public KeySet.

    Which groups the output has then depends on the data: at the default
    pair, group 2 appears exactly when its one record is present (nan in the
    output otherwise). No ε bounds it (dpaudit's upper bound: non-private).
    A KeySet must not depend on the private data: values fixed in advance, or a public table.
    """
    owner = "tumult_analytics_grouped_count_private_keys"
    return _grouped_count(owner, _pure(epsilon, owner), groups, keys="private")


def tumult_analytics_grouped_count_zcdp_private_keys(*, rho: float = 1 / 32, delta: float = GAUSSIAN_DELTA, groups: int = 3) -> Mechanism:
    """BUGGY: `tumult_analytics_grouped_count_zcdp` over the private table's groups (as `tumult_analytics_grouped_count_private_keys`)."""
    owner = "tumult_analytics_grouped_count_zcdp_private_keys"
    return _grouped_count(owner, _zcdp(rho, delta, owner), groups, keys="private")


if tumult_analytics_python() is not None:
    # One Session.evaluate a batch; in batches of 5,000, 0.6–1.5 ms an output (count, sum, grouped count),
    # 1.7–3.9 ms (average), 4.4–5.1 ms (quantile, the exponential mechanism run per group in pandas).
    for _factory, _expected, _cost in (
        (tumult_analytics_count, "consistent", 0.02),
        (tumult_analytics_count_zcdp, "consistent", 0.02),
        (tumult_analytics_count_duplicated_rows, "violation", 0.02),
        (tumult_analytics_count_zcdp_duplicated_rows, "violation", 0.02),
        (tumult_analytics_sum, "consistent", 0.02),
        (tumult_analytics_sum_zcdp, "consistent", 0.02),
        (tumult_analytics_sum_budget_too_large, "violation", 0.02),
        (tumult_analytics_sum_zcdp_budget_too_large, "violation", 0.02),
        (tumult_analytics_sum_zcdp_bits, "violation", 0.02),
        (tumult_analytics_average, "consistent", 0.01),
        (tumult_analytics_average_zcdp, "consistent", 0.01),
        (tumult_analytics_average_duplicated_rows, "violation", 0.01),
        (tumult_analytics_average_zcdp_duplicated_rows, "violation", 0.01),
        (tumult_analytics_quantile, "consistent", 0.005),
        (tumult_analytics_quantile_zcdp, "consistent", 0.005),
        (tumult_analytics_quantile_budget_too_large, "violation", 0.005),
        (tumult_analytics_quantile_zcdp_duplicated_rows, "violation", 0.005),
        (tumult_analytics_grouped_count, "consistent", 0.02),
        (tumult_analytics_grouped_count_zcdp, "consistent", 0.02),
        (tumult_analytics_grouped_count_private_keys, "violation", 0.02),
        (tumult_analytics_grouped_count_zcdp_private_keys, "violation", 0.02),
    ):
        register(_factory.__name__, expected=_expected, suite_trials=_cost,
                 environment=registered_environment(ENVIRONMENT_VARIABLE, ENVIRONMENT.name))(_factory)
