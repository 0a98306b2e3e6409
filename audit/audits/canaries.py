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
    CanarySet,
    both_directions,
    box_canaries,
    box_ends,
    category_canaries,
    fresh_canary_game,
    membership_game,
    pair_canary,
    sparse_canaries,
    vector_canaries,
)
from dpaudit.attacks.canary_scores import CanaryScorer, InnerProduct, OutputStatistic, scorer_by_name
from dpaudit.attacks.games import DEFAULT_CANARIES, Game, MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.attacks.one_run_game import one_run_game
from dpaudit.audit.audits.membership import Played, run_membership_audit
from dpaudit.audit.audits.subject import Subject, mechanism_subject
from dpaudit.audit.estimators.certify import Bound
from dpaudit.audit.results.result import MembershipResult
from dpaudit.errors import InvalidParameterError
from dpaudit.execution.execution import Execution, in_process, spread
from dpaudit.mechanisms.base import Claim, Mechanism, Relation, check_pair
from dpaudit.mechanisms.records import BoxRecords, CategoryRecords, VectorRecords
from dpaudit.validation import check_int

__all__ = ["CANARY_MODES", "DEFAULT_DIM", "audit_canaries", "audit_scores", "mechanism_subject"]

CANARY_MODES = ("auto", "fixed", "random", "pair")
DEFAULT_DIM = 1000
BASE_RECORDS = 100


def _canary_design(mech: Mechanism, m: int, *, dim: int | None, norm: float | None, rng: np.random.Generator,
                   worst: bool = False) -> CanarySet:
    """Return m canaries made from the records `mech` declares (`Mechanism.records`), none of them its null record.

    `CategoryRecords`: one category per canary, skipping the null record.
    `VectorRecords`: random ±norm/√dim vectors, or ±norm·e_i for ℓ1
    clipping (`order` 1), of the declared width (else `dim`, default
    DEFAULT_DIM, or m for more sparse canaries) and norm (else the declared
    one). `BoxRecords`: corners of the box away from its near corner
    (`box_ends`: the end nearer the null record, else 0, in every entry);
    `worst`, the far corner, which moves a sum, a count and a mean of the
    base records alike. Vector and box designs keep BASE_RECORDS records
    (null vectors; the near corner) in every run, so that mechanisms whose
    noise depends on the dataset's size see a realistic one. Under
    replace-one an OUT canary's slot holds its negation, the opposite
    corner, or a spare category. The games then check every dataset against
    the mechanism's neighbour check before any run.

    Raises:
        InvalidParameterError: when `mech` declares no records, or `dim`/`norm` contradict them.
    """
    spec, replace = mech.records, mech.claim.relation is Relation.REPLACE_ONE
    if isinstance(spec, CategoryRecords):
        return category_canaries(m, bins=spec.count, replace=replace, null_record=mech.null_record)
    if isinstance(spec, BoxRecords):
        if norm is not None or (dim is not None and dim != spec.width):
            raise InvalidParameterError(
                f"Mechanism '{mech.name}' takes records of {spec.width} numbers in [{spec.low:g}, {spec.high:g}]; "
                "its canaries are corners of that box, so neither dim nor norm can be chosen."
            )
        design = box_canaries(m, spec=spec, rng=rng, replace=replace, null_record=mech.null_record, worst=worst)
        return dataclasses.replace(design, base=np.tile(box_ends(spec, mech.null_record)[0], (BASE_RECORDS, 1)))
    if isinstance(spec, VectorRecords):
        make = sparse_canaries if spec.order == 1 else vector_canaries
        width = _record_width(mech, spec, dim, m if spec.order == 1 else 0)
        design = make(m, dim=width, norm=spec.norm if norm is None else norm, rng=rng, replace=replace)
        return dataclasses.replace(design, base=np.zeros((BASE_RECORDS, design.records.shape[1])))
    raise InvalidParameterError(
        f"Mechanism '{mech.name}' declares no records, so dpaudit cannot make canaries that its claim is about: "
        "declare them (blackbox(..., records=BoxRecords(low, high)), VectorRecords or CategoryRecords), "
        "or play its default pair (canary='pair')."
    )


def _record_width(mech: Mechanism, spec: VectorRecords, dim: int | None, at_least: int = 0) -> int:
    """Return the canaries' dimension: the declared width, else `dim`, else max(DEFAULT_DIM, `at_least`).

    Only a width nothing fixes grows with the canaries (`at_least`: one
    entry per sparse canary); a declared width or a given `dim` is kept.
    """
    if spec.width is None:
        return max(DEFAULT_DIM, at_least) if dim is None else dim
    if dim is not None and dim != spec.width:
        raise InvalidParameterError(
            f"Mechanism '{mech.name}' takes records of {spec.width} numbers, so canaries have dimension {spec.width}; got dim={dim}."
        )
    return spec.width


def _multi_run_observations(mech, mode, runs, scorer, dim, norm, canary_rng, game_rng, mapper):
    if mode == "auto":
        mode = "pair" if mech.records is None else "fixed"
    if mode == "pair":
        if mech.default_pair is None:
            raise InvalidParameterError(f"Mechanism '{mech.name}' has no default neighbouring pair to play on.")
        canary = pair_canary(*check_pair(mech, *mech.default_pair))
        chosen = scorer or OutputStatistic("sum")
        return membership_game(mech, canary, runs=runs, scorer=chosen, rng=game_rng, mapper=mapper), chosen
    chosen = scorer or InnerProduct()
    if mode == "fixed":
        canary = _canary_design(mech, 1, dim=dim, norm=norm, rng=canary_rng, worst=True)
        return membership_game(mech, canary, runs=runs, scorer=chosen, rng=game_rng), chosen
    if mode == "random":
        def make(rng: np.random.Generator) -> CanarySet:
            return _canary_design(mech, 1, dim=dim, norm=norm, rng=rng)
        return fresh_canary_game(mech, make, runs=runs, scorer=chosen, rng=game_rng, mapper=mapper), chosen
    raise InvalidParameterError(f"The canary mode must be one of {', '.join(CANARY_MODES)}; got {mode!r} instead.")


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
    "direction". With probability ≥ `bound.confidence` the mechanism is not
    (ε', δ)-DP for ε' below the bound (GDP-based estimators: under the
    Gaussian trade-off assumption they name); δ defaults to the claim's.

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

    def play(canary_rng: np.random.Generator, game_rng: np.random.Generator) -> Played:
        if isinstance(game, OneRun):
            design = _canary_design(mech, game.canaries or DEFAULT_CANARIES, dim=dim, norm=norm, rng=canary_rng)
            chosen = scorer or InnerProduct()
            return Played(one_run_game(mech, design, scorer=chosen, rng=game_rng), chosen.name)
        obs, chosen = _multi_run_observations(mech, canary, game.runs, scorer, dim, norm, canary_rng, game_rng, mapper)
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


