"""Adapters that audit PipelineDP (optional extra `dpaudit[pipelinedp]`: pipeline-dp 0.3.1, on python-dp).

Each audit runs PipelineDP's own `DPEngine` on its `LocalBackend`, with a
fresh `NaiveBudgetAccountant` per output (the accountant hands out its
budget once): `aggregate` with COUNT and SUM on one public partition, and
`select_partitions` (private partition selection, truncated geometric by
default; Desfontaines, Voss, Gipson, Mandayam, "Differentially private
partition selection", PoPETs 2022). The privacy unit is a user: a dataset
is a matrix with one row per user and one column per record of that user,
`nan` for a record (or a whole user) absent. The claim is the accountant's
total (ε, δ); the neighbouring relation is add/remove of one user with all
their records, as PipelineDP documents.

One engine run costs about 20 µs (partition selection) to 65 µs (aggregate)
(`python benchmarks/library_speed.py`); the noise comes from python-dp's own
generator, so the `rng` passed in is not used and an audit's seed does not
reproduce the outputs. Nor can a replay record or replay its draws: its
noise and its partition selection are python-dp's, drawn in C++, and its
contribution bounding samples from numpy's global state (`np.random.choice`
in `sampling_utils`); each sampler says so (`CPP_NOISE`), and `audit_replay`
refuses it in one sentence. Registered only when `pipeline_dp` is installed; it takes
seconds to import, so it is imported when an adapter first runs.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Callable, Optional

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.neighbours import declare, in_domain
from dpaudit.mechanisms.records import NumberRecords
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = [
    "pipelinedp_count_sum",
    "pipelinedp_count_sum_row_ids",
    "pipelinedp_partition_selection",
    "pipelinedp_partition_selection_row_ids",
    "pipelinedp_partition_selection_two_users",
    "user_pair",
    "users_differ_by_one",
]

BACKGROUND_USERS = 3
CPP_NOISE = ("PipelineDP adds its noise and selects its partitions with python-dp, which draws in C++ from its own "
             "secure generator, and samples contributions from numpy's global state; no random source dpaudit hands a "
             "mechanism reaches the first")
"""Why a PipelineDP release cannot be replayed: the `not_replayable` of its samplers (read by `dpaudit.attacks.replay`)."""
TARGET, OTHER = 0, 1


def users_differ_by_one(low: float, high: float) -> Callable[[np.ndarray, np.ndarray], Optional[str]]:
    """Return an add/remove check on user matrices: one user's row absent (all nan) in one dataset only.

    Rows are users, columns their records, `nan` an absent record; present
    records must be finite and lie in [low, high] (its domain, `domain_of`).
    """
    domain = NumberRecords(low, high, width=None)

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        outside = in_domain(domain, d0, d1, np.nan)
        if outside:
            return outside + ", one row per user (NaN for an absent record)"
        d0, d1 = d0.astype(float), d1.astype(float)
        same = (d0 == d1) | (np.isnan(d0) & np.isnan(d1))
        changed = np.flatnonzero(~same.all(axis=1))
        if len(changed) > 1:
            return f"they differ in {len(changed)} users, more than 1"
        if len(changed) == 1 and not (np.isnan(d0[changed[0]]).all() or np.isnan(d1[changed[0]]).all()):
            return "the differing user must be absent (a row of nan) in one of them"
        return None

    return declare(check, domain)


def user_pair(*, background: int, added: int, value: float, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Return `background` + `added` − 1 users against `background` + `added` users, every record `value`."""
    d1 = np.full((background + added, rows), value)
    d0 = d1.copy()
    d0[0] = np.nan
    return d0, d1


def _rows(data: np.ndarray, partition: int, first_user: int = 0) -> list[tuple[int, int, float, tuple[int, int]]]:
    """Return (user, partition, value, row id) rows of the present records of a user matrix, users from `first_user`."""
    users, cols = np.nonzero(~np.isnan(data))
    return [(first_user + int(u), partition, float(data[u, c]), (first_user + int(u), int(c))) for u, c in zip(users, cols)]


def _extractors(row_ids: bool) -> Any:
    """Return PipelineDP's extractors; `row_ids` keys privacy by row, the misuse that bounds nothing per user."""
    import pipeline_dp

    privacy_id = (lambda r: r[3]) if row_ids else (lambda r: r[0])
    return pipeline_dp.DataExtractors(privacy_id_extractor=privacy_id, partition_extractor=lambda r: r[1],
                                      value_extractor=lambda r: r[2])


def _engine(epsilon: float, delta: float) -> tuple[Any, Any]:
    import pipeline_dp

    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=epsilon, total_delta=delta)
    return accountant, pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())


def _count_sum(rows: list, epsilon: float, max_value: float, row_ids: bool) -> tuple[float, float]:
    import pipeline_dp

    accountant, engine = _engine(epsilon, 0.0)
    params = pipeline_dp.AggregateParams(
        metrics=[pipeline_dp.Metrics.COUNT, pipeline_dp.Metrics.SUM], noise_kind=pipeline_dp.NoiseKind.LAPLACE,
        max_partitions_contributed=1, max_contributions_per_partition=1, min_value=0.0, max_value=max_value)
    result = engine.aggregate(rows, params, _extractors(row_ids), public_partitions=[TARGET])
    accountant.compute_budgets()
    ((_, metrics),) = list(result)
    return metrics.count, metrics.sum


def _selected(rows: list, epsilon: float, delta: float, row_ids: bool) -> float:
    import pipeline_dp

    accountant, engine = _engine(epsilon, delta)
    result = engine.select_partitions(rows, pipeline_dp.SelectPartitionsParams(max_partitions_contributed=1),
                                      _extractors(row_ids))
    accountant.compute_budgets()
    return float(TARGET in list(result))


def _count_sum_mechanism(name: str, *, epsilon: float, max_value: float, rows_per_user: int, row_ids: bool) -> Mechanism:
    from dp_accounting import dp_event

    owner = name
    eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)
    top = check_real(max_value, "max_value", owner, low=0.0, low_open=True)
    k = check_int(rows_per_user, "rows_per_user", owner)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        rows = _rows(np.asarray(data, dtype=float), TARGET)
        return np.array([_count_sum(rows, eps, top, row_ids) for _ in range(size)])

    setattr(sample, "not_replayable", CPP_NOISE)

    # COUNT and SUM get ε/2 each; one user moves them by 1 and max_value (k and k·max_value when unbounded).
    moved = k if row_ids else 1
    half = dp_event.LaplaceDpEvent(noise_multiplier=2.0 / (eps * moved))
    return Mechanism(
        name=name, sampler=sample, claim=Claim(eps, 0.0), event=dp_event.ComposedDpEvent([half, half]),
        default_pair=user_pair(background=BACKGROUND_USERS, added=1, value=top, rows=k),
        neighbours=users_differ_by_one(0.0, top), null_record=np.nan, params={"epsilon": eps, "max_value": top, "rows_per_user": k},
        description="PipelineDP aggregate: COUNT and SUM of one public partition"
                    + (" with row ids as privacy ids (user contributions unbounded)." if row_ids else "."),
    )


def pipelinedp_count_sum(*, epsilon: float = 1.0, max_value: float = 1.0, rows_per_user: int = 2) -> Mechanism:
    """Return PipelineDP's `aggregate` of COUNT and SUM on one public partition; output (count, sum).

    Parameters: Laplace noise, one partition and one record per user
    (contribution bounding drops the rest), values clamped to [0, max_value].
    The accountant splits ε evenly: COUNT gets Laplace(2/ε), SUM
    Laplace(2·max_value/ε). Upper bound: the two composed (ε).
    Worst case: a user whose records are all max_value.
    """
    return _count_sum_mechanism("pipelinedp_count_sum", epsilon=epsilon, max_value=max_value,
                                rows_per_user=rows_per_user, row_ids=False)


def pipelinedp_count_sum_row_ids(*, epsilon: float = 1.0, max_value: float = 1.0, rows_per_user: int = 2) -> Mechanism:
    """BUGGY: `pipelinedp_count_sum` with each row's id as its privacy id; true ε = rows_per_user · ε.

    A deliberately mis-parameterised call: contribution bounding then keeps
    every record of a user, so one user moves COUNT by k and SUM by
    k·max_value while the noise assumes 1 and max_value.
    """
    return _count_sum_mechanism("pipelinedp_count_sum_row_ids", epsilon=epsilon, max_value=max_value,
                                rows_per_user=rows_per_user, row_ids=True)


def _selection_mechanism(name: str, *, epsilon: float, delta: float, users: int, rows_per_user: int,
                         row_ids: bool) -> Mechanism:
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent, GroupDpEvent

    eps = check_real(epsilon, "epsilon", name, low=0.0, low_open=True)
    dlt = check_real(delta, "delta", name, low=0.0, low_open=True, high=1.0, high_open=True)
    n = check_int(users, "users", name)
    k = check_int(rows_per_user, "rows_per_user", name)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        target = np.asarray(data, dtype=float)
        rows = _rows(target, TARGET) + _rows(np.zeros((BACKGROUND_USERS, 1)), OTHER, first_user=len(target))
        return np.array([_selected(rows, eps, dlt, row_ids) for _ in range(size)])

    setattr(sample, "not_replayable", CPP_NOISE)

    claimed = EpsilonDeltaDpEvent(eps, dlt)
    return Mechanism(
        name=name, sampler=sample, claim=Claim(eps, dlt), event=GroupDpEvent(claimed, k) if row_ids else claimed,
        default_pair=user_pair(background=0, added=n, value=1.0, rows=k), neighbours=users_differ_by_one(-np.inf, np.inf),
        null_record=np.nan,
        params={"epsilon": eps, "delta": dlt, "users": n, "rows_per_user": k},
        description="PipelineDP select_partitions: does the partition of these users appear?"
                    + (" Row ids as privacy ids." if row_ids else ""),
    )


def pipelinedp_partition_selection(*, epsilon: float = 1.0, delta: float = 1e-3, users: int = 1,
                                   rows_per_user: int = 2) -> Mechanism:
    """Return PipelineDP's `select_partitions`; output 1 when the target partition is kept, else 0.

    d0 holds `users` − 1 users in the target partition, d1 `users` (three
    more users sit in another partition, as PipelineDP refuses an empty
    input). With `users` = 1 the audit asks whether partition selection
    protects a lone user: does a partition of one user appear with
    probability at most δ? With 2, the ε
    side: P(keep | 2) ≤ e^ε P(keep | 1) + δ, tight for the truncated
    geometric strategy. Upper bound: the strategy's theorem, (ε, δ)
    (Desfontaines et al. 2022, Thm 1).
    """
    return _selection_mechanism("pipelinedp_partition_selection", epsilon=epsilon, delta=delta, users=users,
                                rows_per_user=rows_per_user, row_ids=False)


def pipelinedp_partition_selection_two_users(*, epsilon: float = 1.0, delta: float = 1e-3,
                                             rows_per_user: int = 2) -> Mechanism:
    """Return `pipelinedp_partition_selection` with `users` = 2: one user against two, the ε side."""
    return _selection_mechanism("pipelinedp_partition_selection_two_users", epsilon=epsilon, delta=delta, users=2,
                                rows_per_user=rows_per_user, row_ids=False)


def pipelinedp_partition_selection_row_ids(*, epsilon: float = 1.0, delta: float = 1e-3, users: int = 1,
                                           rows_per_user: int = 2) -> Mechanism:
    """BUGGY: `pipelinedp_partition_selection` with row ids as privacy ids; one user counts as k.

    A partition of one user with k records is kept with the probability of
    k users (δ(1 + e^ε) for k = 2 under the truncated geometric strategy),
    above δ. Upper bound: group privacy of k.
    """
    return _selection_mechanism("pipelinedp_partition_selection_row_ids", epsilon=epsilon, delta=delta, users=users,
                                rows_per_user=rows_per_user, row_ids=True)


if importlib.util.find_spec("pipeline_dp") is not None:
    # PipelineDP runs its engine once per output: about 95 µs (aggregate), 20 µs (partition selection).
    for _factory, _expected, _cost in (
        (pipelinedp_count_sum, "consistent", 0.02), (pipelinedp_count_sum_row_ids, "violation", 0.02),
        (pipelinedp_partition_selection, "consistent", 0.1), (pipelinedp_partition_selection_two_users, "consistent", 0.1),
        (pipelinedp_partition_selection_row_ids, "violation", 0.1),
    ):
        register(_factory.__name__, expected=_expected, suite_trials=_cost)(_factory)
