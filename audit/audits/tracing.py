"""Tracing audits: a fingerprinting-code membership game on any release of d statistics, tied to an estimator.

Flow: population (column biases, and reference rows when the attacker must
estimate them) → tracing game (`dpaudit.attacks.tracing.game`) →
`Observations` → the membership estimators (threshold/Clopper–Pearson or GDP
for multi-run; one-run or one-run f-DP for one-run) → `MembershipResult`
beside the theory upper bound. No neighbouring pair is searched: the
attack is the one behind the lower bound of Steinke & Ullman ("Between Pure
and Approximate Differential Privacy", arXiv 1501.06095) and the membership
attacks on summary statistics (Dwork, Smith, Steinke, Ullman, Vadhan, FOCS
2015). With `group_size` k the mechanism sees n/k distinct rows each copied
k times (`dpaudit.mechanisms.transforms.copies`), and the claim and upper
bound are group privacy's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from dpaudit.attacks.games import DEFAULT_CANARIES, Game, MultiRun, OneRun
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
from dpaudit.audit.audits.membership import Played, run_membership_audit
from dpaudit.audit.audits.subject import mechanism_subject
from dpaudit.audit.estimators.certify import Bound
from dpaudit.audit.results.result import MembershipResult
from dpaudit.errors import InvalidParameterError
from dpaudit.execution.execution import Execution, spread
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.transforms import copies
from dpaudit.validation import check_int

__all__ = ["audit_tracing"]

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
    game: Game = MultiRun(),
    bound: Bound = Bound(),
    rows: int | None = None,
    dim: int | None = None,
    scorer: str = KNOWN,
    reference_rows: int | None = None,
    biases: str = UNIFORM,
    fresh_data: bool = False,
    group_size: int = 1,
    seed: int = 0,
    execution: Execution = Execution(),
) -> MembershipResult:
    """Return the tracing audit of `mech`, a release of d statistics of n rows in {±1}^d.

    Args:
        mech: the mechanism; it is called on n × d int8 matrices of ±1.
        game: `MultiRun(runs)`: releases with one slot each (IN with probability ½);
            `OneRun(canaries)`: one release with m slots, each IN with probability ½
            (canaries=None: every distinct row; `OneRun()`'s default of DEFAULT_CANARIES
            adapts to the data: every distinct row when there are fewer).
        bound: how the scores are certified (estimator, confidence, δ: default the claim's).
        rows, dim: n and d (default: the mechanism's `num_rows` and `dim`).
        scorer: "known" (⟨y − p, a − p⟩), "reference" (p estimated from `reference_rows`
            rows of the population) or "tardos" (Tardos' weights).
        biases: "uniform" or "tardos" column biases.
        fresh_data: multi-run: draw every row again in each run (else only the slot changes).
        group_size: k: the mechanism sees n/k distinct rows each copied k times; the
            claim and upper bound become group privacy's for k records.
        seed: one seed for the population, the game and the estimator.
        execution: where the multi-run game's chunks of releases are drawn (`Execution`: in process, `workers`
            or `scheduler`; the same result on each); the one-run game's single release is drawn here.

    Returns:
        A `MembershipResult` whose `attack` holds n, d, k, the biases, the score's
        name and the true-positive rate at 1% false positives. With probability
        ≥ `bound.confidence` the mechanism is not (ε', δ)-DP for ε' below its bound (GDP
        and one-run f-DP: under the Gaussian trade-off assumption they name).

    Raises:
        InvalidParameterError: on bad input (one sentence).
    """
    owner = "audit_tracing"
    mapper = spread(execution, owner)
    if not isinstance(mech, Mechanism):
        raise InvalidParameterError(f"{owner} needs a Mechanism; got {type(mech).__name__}.")
    n, d = _shape(mech, rows, dim)
    target, distinct = _group(mech, n, group_size)
    one_run = isinstance(game, OneRun)

    def play(population_rng: np.random.Generator, game_rng: np.random.Generator) -> Played:
        p = column_biases(d, kind=biases, rng=population_rng)
        chosen = _tracing_score(scorer, p, reference_rows=reference_rows, rng=population_rng)
        if one_run:
            m = _slots(game.canaries, distinct)
            obs = tracing_game(target, p, rows=distinct, score=chosen, slots=m, rng=game_rng)
        else:
            obs = tracing_game(target, p, rows=distinct, score=chosen, runs=game.runs, fresh_data=fresh_data,
                               rng=game_rng, mapper=mapper)
        attack = _attack_facts(obs, n=n, d=d, k=group_size, biases=biases, fresh_data=fresh_data and not one_run)
        attack.update({"slots": obs.size} if one_run else {})
        return Played(obs, f"tracing ({chosen.name})", attack)

    return run_membership_audit(owner=owner, game=game, bound=bound, seed=seed, subject=mechanism_subject(target),
                                play=play)


def _slots(canaries: int | None, distinct: int) -> int:
    """Return the one-run game's slots: `canaries`, every distinct row for None, and for the default DEFAULT_CANARIES
    (which `OneRun()` cannot tell from an explicit 1000) no more than the distinct rows; another number above the
    rows is refused by the game."""
    if canaries is None:
        return distinct
    return min(canaries, distinct) if canaries == DEFAULT_CANARIES else canaries


def _attack_facts(obs: Observations, *, n: int, d: int, k: int, biases: str, fresh_data: bool) -> dict[str, Any]:
    return {"rows": n, "columns": d, "group_size": k, "biases": biases, "fresh_data": fresh_data,
            "tpr_at_1pct_fpr": obs.tpr_at(TRACING_FPR)}
