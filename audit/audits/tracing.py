"""Tracing audits: a fingerprinting-code membership game on any release of d statistics, tied to an estimator.

Flow: population (column biases, and reference rows when the attacker must
estimate them) → tracing game (`dpaudit.attacks.tracing.game`) →
`Observations` → the canary estimators (threshold/Clopper–Pearson or GDP
for multi-run; one-run or one-run f-DP for one-run) → `CanaryAuditResult`
beside the theory upper bound. No neighbouring pair is searched: the
attack is the one behind the lower bound of Steinke & Ullman ("Between Pure
and Approximate Differential Privacy", arXiv 1501.06095) and the membership
attacks on summary statistics (Dwork, Smith, Steinke, Ullman, Vadhan, FOCS
2015). With `group_size` k the mechanism sees n/k distinct rows each copied
k times (`dpaudit.mechanisms.transforms.copies`), and the claim and upper
bound are group privacy's.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from dpaudit.attacks.observations import Observations
from dpaudit.attacks.tracing.data import UNIFORM, column_biases, sample_rows
from dpaudit.attacks.tracing.game import tracing_game
from dpaudit.attacks.tracing.scores import (
    KNOWN,
    REFERENCE,
    SCORE_KINDS,
    WEIGHTED,
    TracingScore,
    known_bias_score,
    reference_score,
    tardos_score,
)
from dpaudit.audit.audits.canaries import (
    MULTI_RUN,
    MULTI_RUN_ESTIMATORS,
    ONE_RUN,
    ONE_RUN_ESTIMATORS,
    CanaryAuditResult,
    audit_result,
    check_estimator,
    guess_counts_from,
    multi_run_bound,
    one_run_bound,
    seed_streams,
)
from dpaudit.audit.estimators.thresholds import DominatingPair, ThresholdStrategy
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.errors import InvalidParameterError
from dpaudit.mechanisms.transforms import copies
from dpaudit.mechanisms.validation import check_delta, check_int, check_probability_open

TRACING_FPR = 0.01


def _tracing_score(kind: str, biases: np.ndarray, *, reference_rows: int | None,
                  rng: np.random.Generator) -> TracingScore:
    """Return the score `kind` ("known", "reference" or "tardos"); "reference" draws r rows from the population.

    Raises:
        InvalidParameterError: on an unknown kind, or reference rows given to another kind.
    """
    if kind not in SCORE_KINDS:
        raise InvalidParameterError(f"The tracing score must be one of {', '.join(SCORE_KINDS)}; got {kind!r} instead.")
    if kind != REFERENCE and reference_rows is not None:
        raise InvalidParameterError(f"Reference rows go with the 'reference' score only; got them with {kind!r}.")
    if kind == KNOWN:
        return known_bias_score(biases)
    if kind == WEIGHTED:
        return tardos_score(biases)
    if reference_rows is None:
        raise InvalidParameterError("The 'reference' score needs reference_rows (r ≥ 1 rows of the population).")
    r = check_int(reference_rows, "reference_rows", "_tracing_score")
    return reference_score(sample_rows(biases, r, rng))


def _shape(mech: Mechanism, rows: int | None, dim: int | None) -> tuple[int, int]:
    """Return (n, d): given, or the mechanism's num_rows and dim; they must agree with the mechanism's."""
    n = mech.params.get("num_rows") if rows is None else rows
    d = mech.params.get("dim") if dim is None else dim
    if n is None or d is None:
        raise InvalidParameterError(
            f"audit_tracing needs the number of rows and columns the mechanism '{mech.name}' takes; pass rows= and dim=."
        )
    n, d = check_int(n, "rows", "audit_tracing", low=2), check_int(d, "dim", "audit_tracing")
    for key, value in (("num_rows", n), ("dim", d)):
        if mech.params.get(key, value) != value:
            raise InvalidParameterError(
                f"Mechanism '{mech.name}' was built for {key} = {mech.params[key]}; the tracing game was given {value}."
            )
    return n, d


def _group(mech: Mechanism, n: int, group_size: int) -> tuple[Mechanism, int]:
    """Return the mechanism the game plays against and its number of distinct rows."""
    k = check_int(group_size, "group_size", "audit_tracing")
    if k == 1:
        return mech, n
    if n % k:
        raise InvalidParameterError(f"A group of {k} copies needs rows divisible by {k}; got {n} rows.")
    return copies(mech, k), n // k


def audit_tracing(
    mech: Mechanism,
    *,
    rows: int | None = None,
    dim: int | None = None,
    runs: int = 10_000,
    one_run: bool = False,
    canaries: int | None = None,
    score: str = KNOWN,
    reference_rows: int | None = None,
    biases: str = UNIFORM,
    fresh_data: bool = False,
    group_size: int = 1,
    estimator: str | None = None,
    confidence: float = 0.95,
    delta: float | None = None,
    k_plus: int | None = None,
    k_minus: int | None = None,
    strategy: ThresholdStrategy = DominatingPair(),
    seed: int = 0,
) -> CanaryAuditResult:
    """Return the tracing audit of `mech`, a release of d statistics of n rows in {±1}^d.

    Args:
        mech: the mechanism; it is called on n × d int8 matrices of ±1.
        rows, dim: n and d (default: the mechanism's `num_rows` and `dim`).
        runs: multi-run: the number of releases, each with one slot (IN with probability ½).
        one_run: play the one-run game: one release, `canaries` slots, each IN with probability ½.
        canaries: one-run: the number m of slots (default: every distinct row).
        score: "known" (⟨y − p, a − p⟩), "reference" (p estimated from `reference_rows`
            rows of the population) or "tardos" (Tardos' weights).
        biases: "uniform" or "tardos" column biases.
        fresh_data: multi-run: draw every row again in each run (else only the slot changes).
        group_size: k: the mechanism sees n/k distinct rows each copied k times; the
            claim and upper bound become group privacy's for k records.
        estimator: "threshold" (default) or "gdp" for multi-run, "one-run" (default)
            or "one-run-fdp" for one-run.
        confidence, delta: of the lower bound (δ defaults to the claim's).
        k_plus, k_minus: one-run guess counts (default: a few, paid for).
        strategy: how a multi-run threshold is paid for.
        seed: one seed for the population, the game and the estimator.

    Returns:
        A `CanaryAuditResult` whose `attack` holds n, d, k, the biases, the score's
        name and the true-positive rate at 1% false positives. With probability
        ≥ `confidence` the mechanism is not (ε', δ)-DP for ε' below its bound (GDP
        and one-run f-DP: under the Gaussian trade-off assumption they name).

    Raises:
        InvalidParameterError: on bad input (one sentence).
    """
    owner = "audit_tracing"
    if not isinstance(mech, Mechanism):
        raise InvalidParameterError(f"{owner} needs a Mechanism; got {type(mech).__name__}.")
    confidence = check_probability_open(confidence, "confidence", owner)
    seed = check_int(seed, "seed", owner, low=0)
    n, d = _shape(mech, rows, dim)
    target, distinct = _group(mech, n, group_size)
    delta = target.claim.delta if delta is None else check_delta(delta, owner)
    game = ONE_RUN if one_run else MULTI_RUN
    estimator = estimator or ("one-run" if one_run else "threshold")
    check_estimator(estimator, ONE_RUN_ESTIMATORS if one_run else MULTI_RUN_ESTIMATORS, delta)
    population_rng, game_rng, estimator_rng = seed_streams(seed)
    start = time.perf_counter()
    p = column_biases(d, kind=biases, rng=population_rng)
    chosen = _tracing_score(score, p, reference_rows=reference_rows, rng=population_rng)
    if one_run:
        m = distinct if canaries is None else check_int(canaries, "canaries", owner, low=2)
        obs = tracing_game(target, p, rows=distinct, score=chosen, slots=m, rng=game_rng)
        bound = one_run_bound(obs, estimator=estimator, delta=delta, confidence=confidence,
                              guess_counts=guess_counts_from(k_plus, k_minus), rng=estimator_rng)
    else:
        runs = check_int(runs, "runs", owner, low=4)
        obs = tracing_game(target, p, rows=distinct, score=chosen, runs=runs, fresh_data=fresh_data, rng=game_rng)
        bound = multi_run_bound(obs, estimator=estimator, delta=delta, confidence=confidence, strategy=strategy,
                                rng=estimator_rng)
    attack = _attack_facts(obs, n=n, d=d, k=group_size, biases=biases, fresh_data=fresh_data and not one_run)
    return audit_result(game, bound, f"tracing ({chosen.name})", start, seed, target, delta, obs, attack)


def _attack_facts(obs: Observations, *, n: int, d: int, k: int, biases: str, fresh_data: bool) -> dict[str, Any]:
    return {"rows": n, "columns": d, "group_size": k, "biases": biases, "fresh_data": fresh_data,
            "tpr_at_1pct_fpr": obs.tpr_at(TRACING_FPR)}
