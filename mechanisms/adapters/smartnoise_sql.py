"""Adapters that audit SmartNoise SQL queries (smartnoise-sql 1.0.10) in the environment "smartnoise-sql".

SmartNoise SQL runs differentially private SQL over a pandas DataFrame as
its docs show: `snsql.from_df(df, privacy=Privacy(epsilon=ε, delta=δ),
metadata=META)`, then `reader.execute("SELECT ...")`. It pins its own
OpenDP (0.14), so it lives in an environment of its own (declared here,
built on first use by `dpaudit.mechanisms.environments`), and these
adapters run it as a black box through `smartnoise_side.py` (which see):
one long-lived process per interpreter answers every query of a run.

- **Queries**: `SELECT COUNT(*)`, `SUM(x)`, `AVG(x)`, `VAR(x) FROM T.T`,
  and `SELECT g, COUNT(*) FROM T.T GROUP BY g`, over a table whose
  metadata has the documented keys: `row_privacy: true`, `max_ids: 1`,
  and the float column `x` with `lower` and `upper` (SmartNoise clamps to
  them), or the int column `g`. Everything else keeps SmartNoise's defaults,
  so a result row is released only when its noisy key count exceeds the
  threshold τ that SmartNoise derives from δ (`censor_dims`).
- **Released**: what the user gets back: the value of the result row, NaN
  when SmartNoise returned none; for the grouped count, one count per group
  0 .. groups − 1, NaN for a group without a row.
- **Claim**: SmartNoise's own accounting of the query under the Privacy
  given: `PrivateReader.get_privacy_cost(query)`, its odometer's (ε, δ) for
  every noisy column of the rewritten query (a SUM pays for the key count
  too: ε = 2 at Privacy(epsilon=1)). Never restated by hand.
- **Upper bound**: dpaudit's, from the noise SmartNoise states for each
  column (its `scale` and `sensitivity`): the ungrouped queries compose one
  Laplace release per noisy column (the censoring and AVG's and VAR's
  arithmetic only post-process them); the grouped count is the thresholded
  Laplace's (ε, δ) with ε = sensitivity/scale and δ = ½·exp(−(τ − 1)/scale),
  the chance that a group of one record passes τ.
- **Relation and records**: a row added or removed (`row_privacy`; NaN
  marks the absent record in dpaudit's datasets); a record is a finite
  number (any: SmartNoise clamps), or a group label 0 .. groups − 1.
- **Pairs**, one rule for every query, from the declared bounds only:
  `rows` records at the bound nearer 0 (at the midpoint for SUM and COUNT)
  against the same with a record at the other bound (for SUM the bound of
  largest magnitude) added; grouped count: `rows` records spread over the
  groups, a record of group 0 added.
- **Draws**: a batch of N outputs is one `execute` over N copies of the
  dataset grouped by a public `copy` column as well; the side checks, every
  batch, that SmartNoise noises and costs that query as the single one.
  SmartNoise draws through OpenDP's own generator (no public seed): an audit
  does not repeat bit for bit; every draw is fresh, so soundness holds.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from dpaudit.errors import MechanismError
from dpaudit.mechanisms.base import Mechanism, Relation
from dpaudit.mechanisms.builtins.statistics import present_records
from dpaudit.mechanisms.environments import Environment, declare, environment_python
from dpaudit.mechanisms.external.processes import ExternalProcess, SideRequests, external_python, side_process
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = ["ENVIRONMENT", "smartnoise_avg", "smartnoise_count", "smartnoise_grouped_count", "smartnoise_sum",
           "smartnoise_var"]

ENVIRONMENT = declare(Environment(
    name="smartnoise-sql",
    packages=("smartnoise-sql==1.0.10", "opendp==0.14.2", "pandas==2.3.3"),
    python="3.11",
    description="SmartNoise SQL 1.0.10 (OpenDP 0.14.2, pandas 2.3.3): the smartnoise_* adapters",
    check="import snsql",
))
SIDE = Path(__file__).resolve().parents[1] / "scripts" / "smartnoise_side.py"
BATCH_TIMEOUT = 3600.0  # seconds for one batch: SmartNoise releases 3–6 ms a row (every copy is a row)


def _python() -> str:
    """Return the interpreter of the "smartnoise-sql" environment, building it on first use."""
    return str(environment_python(ENVIRONMENT.name))


def _process(python: str) -> ExternalProcess:
    """Return the one SmartNoise process of `python` (`smartnoise_side:serve`), shared by every adapter of this process."""
    return side_process(python, "smartnoise_side:serve", name="SmartNoise SQL", folder=str(SIDE.parent), timeout=BATCH_TIMEOUT)


@functools.lru_cache(maxsize=64)
def _describe(python: str, query: str, params_json: str) -> dict[str, Any]:
    """Return what SmartNoise states for `query` with `params_json`: its cost and noisy columns (`smartnoise_side.describe`)."""
    request = {"kind": ["describe"], "query": [query], "params": [params_json]}
    reply = _process(python)(request, 1, np.random.default_rng(0))
    return json.loads(str(reply[0]))


class Queries(SideRequests):
    """`sampler(data, size, rng)` of a SmartNoise query: the present records (NaN dropped) go to the side process.

    A group label that is not an integer in [0, `groups`) is a ValueError. Picklable (a copy carries the command).
    Not replayable (`not_replayable` says why, and `audit_replay` refuses it in one sentence).
    """

    not_replayable = ("SmartNoise SQL adds its noise with OpenDP's samplers, drawn in Rust from the operating system's "
                      "entropy in its own environment, which the seed dpaudit sends it does not reach")

    def __init__(self, process: ExternalProcess, query: str, params: dict[str, Any], groups: int | None = None) -> None:
        self.process, self.query, self.params, self.groups = process, query, params, groups

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Return `size` releases of the query on the present records of `data`."""
        values = np.asarray(data, dtype=float).ravel()
        rows = values[~np.isnan(values)]
        if self.groups is not None and np.any((rows != np.round(rows)) | (rows < 0) | (rows >= self.groups)):
            raise ValueError(f"group labels must be integers in [0, {self.groups - 1}] (nan for an absent row)")
        request = {"kind": ["query"], "query": [self.query], "params": [json.dumps(self.params, sort_keys=True)], "x": rows}
        return self.process(request, size, rng)



# ---- dpaudit's upper bound, from the noise SmartNoise states


def _laplace_columns(described: dict[str, Any]) -> dp_event.DpEvent:
    """Return the composition of one Laplace release per noisy column (noise multiplier scale / sensitivity)."""
    from dp_accounting import dp_event

    parts = []
    for mech in described["mechanisms"]:
        if mech["class"] != "Laplace":
            raise MechanismError(f"SmartNoise uses {mech['class']} for {mech['column']}; dpaudit analyses its Laplace only.")
        parts.append(dp_event.LaplaceDpEvent(noise_multiplier=mech["scale"] / mech["sensitivity"]))
    return parts[0] if len(parts) == 1 else dp_event.ComposedDpEvent(parts)


def _thresholded_count(described: dict[str, Any]) -> dp_event.DpEvent:
    """Return the (ε, δ) of a Laplace count released above τ: ε = sensitivity/scale, δ = ½·exp(−(τ − 1)/scale)."""
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    (mech,) = described["mechanisms"]
    scale, tau = mech["scale"], mech["threshold"]
    return EpsilonDeltaDpEvent(mech["sensitivity"] / scale, min(1.0, 0.5 * math.exp(-(tau - 1.0) / scale)))


# ---- the adapters


@dataclasses.dataclass(frozen=True)
class _Spec:
    name: str
    query: str
    params: dict[str, Any]  # the Privacy (epsilon, delta) and the metadata's bounds, or the groups
    pair: tuple[np.ndarray, np.ndarray]
    groups: int | None = None


def _build(spec: _Spec) -> Mechanism:
    """Return the mechanism of `spec`: SmartNoise's cost as the claim, dpaudit's event, the side process as sampler."""
    python = _python()
    described = _describe(python, spec.query, json.dumps(spec.params, sort_keys=True))
    cost = described["cost"]
    high = np.inf if spec.groups is None else spec.groups - 1
    mech = external_python(
        python, "smartnoise_side:serve", epsilon=cost["epsilon"], delta=cost["delta"], relation=Relation.ADD_REMOVE,
        name=spec.name, default_pair=spec.pair, neighbours=present_records(-np.inf if spec.groups is None else 0, high),
        timeout=BATCH_TIMEOUT, path=[str(SIDE.parent)], check=False,
    )
    event = _laplace_columns(described) if spec.groups is None else _thresholded_count(described)
    facts = {"smartnoise_sql": described["smartnoise_sql"], "opendp": described["opendp"], "sql": described["sql"],
             "noise": [f"{m['column']}: {m['class']}({m['scale']:.6g})" for m in described["mechanisms"]]}
    return dataclasses.replace(
        mech, sampler=Queries(_process(python), spec.query, spec.params, spec.groups), event=event,
        params={**spec.params, **facts}, null_record=np.nan,
        description=f"SmartNoise SQL {described['smartnoise_sql']}: {described['sql']} over a pandas reader "
                    f"(run in {python}; OpenDP's own RNG).",
    )


def _privacy(name: str, epsilon: float, delta: float) -> dict[str, float]:
    return {"epsilon": check_real(epsilon, "epsilon", name, low=0.0, low_open=True),
            "delta": check_real(delta, "delta", name, low=0.0, low_open=True, high=1.0, high_open=True)}


def _column(name: str, query: str, epsilon: float, delta: float, lower: float, upper: float, rows: int) -> Mechanism:
    """Return the adapter of an aggregate of `x` (or COUNT(*)) with the one pair rule of this module."""
    lo = check_real(lower, "lower", name)
    hi = check_real(upper, "upper", name, low=lo, low_open=True)
    n = check_int(rows, "rows", name)
    near, far = (lo, hi) if abs(lo) <= abs(hi) else (hi, lo)
    base = np.full(n, (lo + hi) / 2 if query in ("sum", "count") else near)
    added = (lo + hi) / 2 if query == "count" else far
    spec = _Spec(name, query, {**_privacy(name, epsilon, delta), "lower": lo, "upper": hi},
                 (np.append(base, np.nan), np.append(base, added)))
    return _build(spec)


def smartnoise_count(*, epsilon: float = 1.0, delta: float = 1e-5, lower: float = -2.0, upper: float = 1.0,
                     rows: int = 30) -> Mechanism:
    """Return `SELECT COUNT(*) FROM T.T` under Privacy(epsilon, delta); claim `get_privacy_cost` of the query."""
    return _column("smartnoise_count", "count", epsilon, delta, lower, upper, rows)


def smartnoise_sum(*, epsilon: float = 1.0, delta: float = 1e-5, lower: float = -2.0, upper: float = 1.0,
                   rows: int = 30) -> Mechanism:
    """Return `SELECT SUM(x) FROM T.T` (x in [lower, upper]) under Privacy(epsilon, delta); claim its cost."""
    return _column("smartnoise_sum", "sum", epsilon, delta, lower, upper, rows)


def smartnoise_avg(*, epsilon: float = 1.0, delta: float = 1e-5, lower: float = -2.0, upper: float = 1.0,
                   rows: int = 30) -> Mechanism:
    """Return `SELECT AVG(x) FROM T.T` (noisy SUM over noisy COUNT) under Privacy(epsilon, delta); claim its cost."""
    return _column("smartnoise_avg", "avg", epsilon, delta, lower, upper, rows)


def smartnoise_var(*, epsilon: float = 1.0, delta: float = 1e-5, lower: float = -2.0, upper: float = 1.0,
                   rows: int = 30) -> Mechanism:
    """Return `SELECT VAR(x) FROM T.T` (noisy sums of x and x², noisy count) under Privacy(epsilon, delta); claim its cost."""
    return _column("smartnoise_var", "var", epsilon, delta, lower, upper, rows)


def smartnoise_grouped_count(*, epsilon: float = 1.0, delta: float = 1e-5, groups: int = 3, rows: int = 45) -> Mechanism:
    """Return `SELECT g, COUNT(*) FROM T.T GROUP BY g` under Privacy(epsilon, delta); claim its cost.

    Output: one count per group 0 .. groups − 1, NaN where SmartNoise censored the group (or it had no row).
    """
    name = "smartnoise_grouped_count"
    k = check_int(groups, "groups", name)
    base = np.arange(check_int(rows, "rows", name), dtype=float) % k
    spec = _Spec(name, "grouped_count", {**_privacy(name, epsilon, delta), "groups": k},
                 (np.append(base, np.nan), np.append(base, 0.0)), groups=k)
    return _build(spec)


# Registering builds nothing: the environment is built when a mechanism is first built. 3–6 ms an output, so the
# quick suite's 2,000 trials take 15–30 s a query.
for _name, _factory in (("smartnoise_count", smartnoise_count), ("smartnoise_sum", smartnoise_sum),
                        ("smartnoise_avg", smartnoise_avg), ("smartnoise_var", smartnoise_var),
                        ("smartnoise_grouped_count", smartnoise_grouped_count)):
    register(_name, expected="consistent", suite_trials=0.002, environment=ENVIRONMENT.name)(_factory)
