"""The one path of every membership audit: check → seed streams → play the game → certify → result.

Canary, saved-score, DP-SGD and tracing audits differ only in how they play
their game (`play`) and in what they audit (`Subject`: the name, claim and
theory upper bound of the report). Seeds: one `SeedSequence(seed)` spawned
into three independent streams, for the data (canaries, population, θ₀),
the game and the estimator, so the same seed gives the same result and a
re-audit of saved scores reuses the estimator's stream.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

import numpy as np
from dpaudit.attacks.games import Game, MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.attacks.played import Played
from dpaudit.audit.audits.subject import Subject
from dpaudit.audit.estimators.certify import Bound, certify, certify_best
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.projected_runs import projected_runs_of
from dpaudit.audit.results.provenance import ARMS, Selection
from dpaudit.audit.results.result import MembershipResult, refutes
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Claim
from dpaudit.validation import check_int

__all__ = ["Played", "bound_beside", "certify_at_share", "check_game", "run_membership_audit", "seed_streams"]


def seed_streams(seed: int) -> list[np.random.Generator]:
    """Return the three independent streams of an audit seeded `seed`: data, game, estimator."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3)]


def check_game(game: Any, bound: Any, owner: str) -> None:
    """Raise unless `game` is a `MultiRun` or `OneRun` and `bound` a `Bound` (one sentence each)."""
    if not isinstance(game, (MultiRun, OneRun)):
        raise InvalidParameterError(
            f"The 'game' parameter of {owner} must be MultiRun(runs) or OneRun(canaries); got {type(game).__name__} instead."
        )
    if not isinstance(bound, Bound):
        raise InvalidParameterError(
            f"The 'bound' parameter of {owner} must be a Bound(estimator, confidence, delta, strategy); "
            f"got {type(bound).__name__} instead."
        )


def run_membership_audit(
    *,
    owner: str,
    game: Game,
    bound: Bound,
    seed: int,
    subject: Subject,
    play: Callable[[np.random.Generator, np.random.Generator], Played],
    beside: str | None = None,
) -> MembershipResult:
    """Return the audit of `subject` by `game`, played by `play(data_rng, game_rng)` and certified as `bound` says.

    Input is checked before anything is played (a bad estimator fails
    before a long training run). The bound is at `bound.delta`, else the
    claim's δ. Sound as `certify` is, given that `play` decides every
    canary's membership from its game stream independently of the scores.
    `beside`: an estimator under an assumption (e.g. "gdp") whose bound is
    reported next to an assumption-free one of a multi-run game at δ > 0,
    with the runs an assumption-free audit would need if it held; it never
    decides the verdict, and draws from the estimator stream after the verdict's bound.
    A ladder's result keeps every arm in its `selection`, so that `recertify` pays for the best arm again.
    """
    check_game(game, bound, owner)
    if isinstance(game, MultiRun) and game.sequential:
        raise InvalidParameterError(f"{owner} plays a fixed number of runs; MultiRun(runs, sequential=True) (--runs "
                                    "sequential) is played by audit_canaries and audit_dpsgd.")
    seed = check_int(seed, "seed", owner, low=0)
    delta = bound.delta_for(None if subject.claim is None else subject.claim.delta)
    bound.estimator_for(game, delta)
    data_rng, game_rng, estimator_rng = seed_streams(seed)
    start = time.perf_counter()
    played = play(data_rng, game_rng)
    observations, attack, selection = played.evidence, dict(played.attack), None
    if isinstance(observations, tuple):
        best, lower = certify_best(observations, game, bound, delta=delta, rng=estimator_rng)
        selection = Selection(ARMS, observations, (1.0 / len(observations),) * len(observations), best)
        observations = dataclasses.replace(observations[best], beta_share=selection.shares[best])
        attack["best_canary"] = best
    else:
        lower = certify_at_share(observations, game, bound, delta, estimator_rng)
    assumed, projected = bound_beside(beside, played.evidence, game, bound, lower, delta, estimator_rng, subject.claim)
    result = MembershipResult(
        game=game.name, lower_bound=lower, scorer=played.scorer, seconds=time.perf_counter() - start, seed=seed,
        mechanism=subject.name, params=dict(subject.params), claim=subject.claim,
        upper_bound=subject.upper_bound(delta), observations=observations, attack=attack, game_spec=game, bound=bound,
        beside=assumed, projected_runs=projected, selection=selection,
    )
    if played.store:
        played.store.write_result(result.to_dict())
    return result


def certify_at_share(observations: Observations, game: Game, bound: Bound, delta: float,
                   rng: np.random.Generator) -> LowerBound:
    """Return `observations` certified at their share of β (`Observations.beta_share`), stated at the bound's confidence.

    Scores kept among several arms, each certified at its share, are
    certified again at that share: all arms' bounds held at once with
    probability 1 − β, so the kept one's does too, whichever was kept.
    """
    if observations.beta_share == 1.0:
        return certify(observations, game, bound, delta=delta, rng=rng)
    share = dataclasses.replace(bound, confidence=1.0 - (1.0 - bound.confidence) * observations.beta_share)
    return dataclasses.replace(certify(observations, game, share, delta=delta, rng=rng), confidence=bound.confidence)


def bound_beside(name: str | None, observations: Observations | tuple[Observations, ...], game: Game, bound: Bound,
            lower: LowerBound, delta: float, rng: np.random.Generator,
            claim: Claim | None) -> tuple[LowerBound | None, int | None]:
    """Return the bound of estimator `name` on the same scores, and the runs an assumption-free audit would need if it held.

    (None, None) unless `name` is given, the game is multi-run, δ > 0 and the
    verdict's bound is assumption-free. Several arms are certified as
    `certify_best` certifies them (each at β/K); the projection reads the
    best arm's AUC, when its scores separate members at the audit's confidence (`projected_runs_of`).
    """
    if name is None or not isinstance(game, MultiRun) or delta == 0.0 or lower.assumption is not None:
        return None, None
    spec = dataclasses.replace(bound, estimator=name)
    arms = observations if isinstance(observations, tuple) else (observations,)
    best, assumed = certify_best(arms, game, spec, delta=delta, rng=rng) if len(arms) > 1 else \
        (0, certify(arms[0], game, spec, delta=delta, rng=rng))
    if claim is None or refutes(lower, claim):
        return assumed, None
    return assumed, projected_runs_of(arms[best], claim_epsilon=claim.epsilon, delta=delta, confidence=bound.confidence)
