"""Canary audits: the membership games played on a mechanism with canaries dpaudit makes, and on saved scores.

`audit_canaries(mech, game=MultiRun(runs))`: R runs, each with or without one
canary (a fixed canary, a fresh random canary per run, or the mechanism's
own neighbouring pair). `audit_canaries(mech, game=OneRun(canaries))`: m
canaries each in with probability 1/2, one run (Steinke, Nasr, Jagielski,
NeurIPS 2023). `audit_scores` certifies scores produced elsewhere. All go
through `membership.run_membership_audit` and `estimators.certify`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from dpaudit.attacks.canary import (
    DIRECTIONS,
    both_directions,
)
from dpaudit.attacks.canary_design import CANARY_MODES, canary_design, multi_run_observations
from dpaudit.attacks.canary_scores import CanaryScorer, InnerProduct, scorer_by_name
from dpaudit.attacks.games import DEFAULT_CANARIES, Game, MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.attacks.one_run_game import one_run_game
from dpaudit.audit.audits.membership import Played, run_membership_audit
from dpaudit.audit.audits.sequential_canaries import audit_canaries_sequentially
from dpaudit.audit.audits.subject import Subject, mechanism_subject
from dpaudit.audit.estimators.certify import Bound
from dpaudit.audit.results.result import MembershipResult
from dpaudit.errors import InvalidParameterError
from dpaudit.execution.execution import Execution, in_process, spread
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.validation import check_int

__all__ = ["audit_canaries", "audit_scores"]

def audit_canaries(
    mech: Mechanism,
    *,
    game: Game = MultiRun(),
    bound: Bound = Bound(),
    canary: str = "auto",
    scorer: str | CanaryScorer | None = None,
    dim: int | None = None,
    norm: float | None = None,
    seed: int = 0,
    execution: Execution = Execution(),
) -> MembershipResult:
    """Return the membership audit of `mech` with canaries dpaudit makes for it.

    `game`: `MultiRun(runs)`, R runs each with or without one canary, or
    `OneRun(canaries, guesses=...)`, m canaries each in with probability 1/2
    in one run. `canary` (multi-run): "fixed" (one canary, white-box
    inner-product score: a random vector of dimension `dim`, the box's far
    corner, or a category), "random" (a fresh canary each run), "pair" (the
    mechanism's default neighbouring pair, black-box score of the output's
    sum), "auto" (fixed when dpaudit can make canaries for the mechanism,
    else pair); the one-run game always uses m fixed canaries. A multi-run
    game certifies its scores in both directions (members higher, members
    lower: `both_directions`), each at β/2, and reports the chosen one under
    "direction". `MultiRun(runs, sequential=True)` plays at most `runs` runs
    in epochs and stops at a certified violation or when the claim is out of
    reach (`sequential_runs`; its bound holds at every stopping time). With
    probability ≥ `bound.confidence` the mechanism is not (ε', δ)-DP for ε'
    below the bound (GDP-based estimators: under the Gaussian trade-off
    assumption they name); δ defaults to the claim's.

    Args:
        mech: the mechanism.
        game, bound: the game played and how its scores are certified.
        canary, scorer: how the game is played and scored (see above); `scorer` is a name, as on every entry
            point ("inner-product", "black-box-sum", "black-box-norm", "black-box-max"), or a `CanaryScorer`.
        dim, norm: vector canaries' dimension and norm (default: the mechanism's).
        seed: one seed for the canaries, the game and the estimator.
        execution: where the multi-run game's chunks of runs are drawn (`Execution`: in process, `workers` or
            `scheduler`; the same result on each); the one-run game's single release is drawn here.

    Returns:
        A `MembershipResult` with the game's observations.

    Raises:
        InvalidParameterError: on bad input (one sentence).
    """
    owner = "audit_canaries"
    mapper = spread(execution, owner)
    subject = mechanism_subject(mech)
    dim = None if dim is None else check_int(dim, "dim", owner)
    scorer = scorer_by_name(scorer) if isinstance(scorer, str) else scorer
    if canary not in CANARY_MODES:
        raise InvalidParameterError(f"The canary mode must be one of {', '.join(CANARY_MODES)}; got {canary!r} instead.")
    if isinstance(game, OneRun) and canary not in ("auto", "fixed"):
        raise InvalidParameterError(f"The one-run game plays m fixed canaries; got canary={canary!r}.")

    if isinstance(game, MultiRun) and game.sequential:
        return audit_canaries_sequentially(mech, game=game, bound=bound, canary=canary, scorer=scorer, dim=dim,
                                           norm=norm, seed=seed, execution=execution, subject=subject, mapper=mapper)

    def play(canary_rng: np.random.Generator, game_rng: np.random.Generator) -> Played:
        if isinstance(game, OneRun):
            design = canary_design(mech, game.canaries or DEFAULT_CANARIES, dim=dim, norm=norm, rng=canary_rng)
            chosen = scorer or InnerProduct()
            return Played(one_run_game(mech, design, scorer=chosen, rng=game_rng), chosen.name)
        obs, chosen = multi_run_observations(mech, canary, game.runs, scorer, dim, norm, canary_rng, game_rng, mapper)
        return Played(both_directions(obs), chosen.name)

    result = run_membership_audit(owner=owner, game=game, bound=bound, seed=seed, subject=subject, play=play)
    return result if isinstance(game, OneRun) else _direction_named(result)


def _direction_named(result: MembershipResult) -> MembershipResult:
    """Return a multi-run result certified on `both_directions`: the chosen arm named as a direction, the scores as scored.

    The method stays the estimator's (the JSON's "estimator"); the attack
    facts say which direction certified and that both were paid for. The
    kept observations are the scores as the scorer gave them (negated back
    when the lower direction won): saved and audited again by
    `audit_scores`, they are certified as scored, higher meaning member,
    at all of β: that direction was fixed before the game, not chosen.
    """
    attack = dict(result.attack)
    best = attack.pop("best_canary")
    each = 1.0 - (1.0 - result.lower_bound.confidence) / len(DIRECTIONS)
    attack.update(direction=DIRECTIONS[best], directions_certified=f"both, each at confidence {each:.4g}")
    method = result.lower_bound.method.split(", best of 2 canaries")[0]
    scores = dataclasses.replace(both_directions(result.observations)[best], beta_share=1.0)
    return dataclasses.replace(result, attack=attack, observations=scores,
                               lower_bound=dataclasses.replace(result.lower_bound, method=method))


def audit_scores(
    obs: Observations,
    *,
    game: Game,
    bound: Bound = Bound(),
    claim: Claim | None = None,
    seed: int = 0,
    label: str = "saved scores",
    execution: Execution = Execution(),
) -> MembershipResult:
    """Return the audit of scores produced elsewhere (e.g. a user's pipeline), for the given `game`.

    `MultiRun(runs)`: independent runs, one score each. `OneRun(canaries)`:
    one run whose canaries were each included independently with
    probability 1/2 (the user's responsibility). Higher means member: the
    scores are certified in that direction only, at all of β. The game's
    size is taken from the scores. `claim`, if given, yields a verdict and
    is δ's default. The estimator's random stream is the one
    `audit_canaries` uses for the same seed, so re-auditing the saved
    observations of its one-run game gives the same bound; its multi-run
    game paid β/2 for each direction and kept its scores as scored, so
    they are certified here, as scored, at all of β (no selection made on
    them is reused).

    Args:
        obs: scores (higher = member) and truth produced elsewhere.
        game, bound: the game the scores come from, and how they are certified.
        claim: the claim to give a verdict against (none: no verdict).
        seed: the estimator's stream; label: the scores' name in reports.
        execution: in process only (nothing is played).

    Returns:
        A `MembershipResult`.

    Raises:
        InvalidParameterError: on bad input (one sentence).
    """
    in_process(execution, "audit_scores")
    if not isinstance(obs, Observations):
        raise InvalidParameterError(f"audit_scores needs Observations (scores and truth); got {type(obs).__name__}.")
    return run_membership_audit(owner="audit_scores", game=game, bound=bound, seed=seed, subject=Subject(claim=claim),
                                play=lambda data_rng, game_rng: Played(obs, label))


