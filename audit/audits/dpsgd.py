"""DP-SGD audits: train with canaries (dpaudit's trainer, Opacus or a user's loop), score them, certify ε.

Flow, as for every canary audit: target (a `DPSGDTarget`, resolved once)
→ canaries (seeded) and, for a user's loop, the dataset (named, or screened
by `dataset="auto"`) → training runs (in process or on Dask workers, each
finished run saved to the execution's run store) → `Observations` → the
estimators → `MembershipResult`, beside the target's claim and dpaudit's
PLD upper bound of what its code does, with the GDP bound reported beside
an assumption-free one (never the verdict).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from dpaudit.attacks.dpsgd.attack import DPSGDAttack
from dpaudit.attacks.dpsgd.audit_datasets import ADVERSARIAL, AUTO, BATCH_ADVERSARIAL, CANARIES_ONLY, USER_DATA
from dpaudit.attacks.dpsgd.canaries import CRAFTED, DIRAC, QUIET
from dpaudit.attacks.dpsgd.game import DPAUDIT, PROBE_STREAM
from dpaudit.attacks.dpsgd.scores import LOSS, THREATS, WHITE_BOX
from dpaudit.attacks.dpsgd.screening import ArmJudge
from dpaudit.attacks.games import MIN_RUNS, SEQUENTIAL, TRAINING_RUNS, Game, MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.membership import run_membership_audit, seed_streams
from dpaudit.audit.audits.sequential_runs import check_sequential_bound, play_sequentially, sequences_certify_runs
from dpaudit.audit.audits.subject import Subject
from dpaudit.audit.estimators.certify import Bound, certify
from dpaudit.audit.estimators.projected_runs import auc_mu
from dpaudit.audit.results.result import MembershipResult
from dpaudit.audit.theory.upper_bound import upper_bound
from dpaudit.errors import InvalidParameterError
from dpaudit.execution.execution import Execution
from dpaudit.execution.interrupted import Interrupted
from dpaudit.mechanisms.base import Claim, Relation
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.target import DPSGDTarget, resolve_target
from dpaudit.validation import check_int

__all__ = ["DPSGDInterrupted", "audit_dpsgd"]

DATASET_CHOICES = (AUTO, USER_DATA, CANARIES_ONLY, ADVERSARIAL, BATCH_ADVERSARIAL)
BESIDE = "gdp"  # the estimator reported beside an assumption-free bound of a multi-run game
DEFAULT_WHY = ("a training run is an expensive draw: with no game or runs given, the sequential game of at most "
               f"{TRAINING_RUNS} runs; runs={TRAINING_RUNS} (--runs {TRAINING_RUNS}) plays the fixed game")
"""Why `audit_dpsgd` without a game plays the sequential one (issue 53), in the result's attack facts ("default")."""

DPSGDInterrupted = Interrupted
"""The name this interruption had before every audit shared `Interrupted`: Ctrl-C during the training runs,
`done` of `total` runs saved in `store` (None without a results folder)."""


def audit_dpsgd(
    config: DPSGDConfig | None = None,
    *,
    target: str | DPSGDTarget = DPAUDIT,
    game: Game | None = None,
    bound: Bound = Bound(),
    canary: str = AUTO,
    dirac_target: str = QUIET,
    threat: str = WHITE_BOX,
    scorer: str = LOSS,
    runs: int | str | None = None,
    dataset: str | int = AUTO,
    execution: Execution = Execution(),
    seed: int = 0,
) -> MembershipResult:
    """Return the certified ε of a DP-SGD training run's claim, from many training runs or from one.

    Args:
        config: the training run of dpaudit's trainer or Opacus (`DPSGDConfig`; unused for a user's loop).
        target: "dpaudit" (this package's trainer, `config.bug` included), "opacus", or a
            `DPSGDTarget` (a `UserTrainer` wrapping your own training function, a `BuiltinTarget`).
        game: `MultiRun(runs)` (half of them, by a seeded permutation, with the canary), `MultiRun(runs,
            sequential=True)` (at most `runs`, in epochs, stopping when decided: `sequential_runs`) or
            `OneRun(canaries)`. Left out with `runs`: sequential, at most the default TRAINING_RUNS, 200 (`_game`).
        bound: how the scores are certified (estimator, confidence, δ: default the claim's).
        canary: "auto" (the default: "dirac" where gradient canaries can enter the runs, as in dpaudit's trainer,
            Opacus and a loop with the hook, else "crafted"), "dirac" (gradient-space), "crafted" or "mislabelled"
            (input-space); the result's attack names the kind played.
        dirac_target: Dirac coordinates: "quiet" (least touched at θ₀) or "bias".
        threat: "white-box" (every iterate) or "black-box" (final parameters).
        scorer: black-box score of input canaries: "loss" or "loss-difference".
        runs: shorthand for `game=MultiRun(runs)`; "sequential" for `game=MultiRun(TRAINING_RUNS, sequential=True)`.
        dataset: what a user's loop trains on besides the canaries: "auto" (the default: the
            canaries alone, a few rows, both adversarial datasets and your data are screened on runs
            of their own, and the best is audited), "user" (your data), an int k (k of your rows,
            drawn from the seed), "canaries" (the canaries alone), "adversarial" (rows whose
            gradients oppose each crafted canary's, or raw gradients against a Dirac one) or
            "batch-adversarial" (units of a row against one crafted canary and zero rows of the
            other labels, so that every batch's sum opposes it). Sound for each: the claim is for
            every dataset.
            dpaudit's trainer and Opacus train on `config.data` ("auto" and "user" mean it).
        execution: where the runs go (`Execution`: Dask workers or scheduler, progress, the run store).
        seed: one seed for θ₀, the canaries, the datasets, every run and the estimator.

    Returns:
        A `MembershipResult`: the target's claim, dpaudit's PLD upper bound of
        what the code does (when its event is known), and the lower bound,
        which holds with probability ≥ `bound.confidence` (GDP and f-DP one-run:
        under the Gaussian trade-off assumption they name). Beside an
        assumption-free bound of a multi-run game at δ > 0, the GDP bound on
        the same scores (`beside`: "violation under the GDP assumption" when it
        exceeds the claim) and the runs an assumption-free audit would need if
        that assumption held; the verdict is the assumption-free bound's alone.
        Sound as the estimators are: runs are independent given the seed, each
        canary's inclusion is decided before training, and a screened dataset
        is chosen on runs apart from the game's.

    Raises:
        InvalidParameterError: on bad input (one sentence).
        Interrupted: on Ctrl-C, after saving the finished runs in the run store.
    """
    owner = "audit_dpsgd"
    config = config or DPSGDConfig()
    game, default = _game(game, runs, owner, bound)
    if isinstance(game, MultiRun) and game.sequential:
        check_sequential_bound(bound)  # before any training run
    trained = resolve_target(target, config)
    _check_choices(trained, threat)
    dataset = _dataset(dataset, trained, game, owner)
    canary = _canary(canary, trained, seed)
    attack = DPSGDAttack(trained, config, canary, dirac_target, threat, scorer, dataset, seed,
                         _arm_judge(bound, trained.claim))
    event = trained.event
    subject = Subject(trained.name, trained.params, trained.claim,
                      lambda delta: None if event is None else upper_bound(event, delta=delta))
    if isinstance(game, MultiRun) and game.sequential:
        return _sequentially(attack, game, bound, seed, subject, execution, default)
    return run_membership_audit(owner=owner, game=game, bound=bound, seed=seed, subject=subject,
                                play=functools.partial(attack.play, game, execution), beside=BESIDE)


def _sequentially(attack: DPSGDAttack, game: MultiRun, bound: Bound, seed: int, subject: Subject,
                  execution: Execution, default: str | None) -> MembershipResult:
    """Return the sequential game's result (`sequential_runs`): canaries, dataset and every membership fixed first,
    from the same streams as the fixed game's; each finished run kept in the run store; the GDP bound beside the
    planned look at all runs, as the fixed game reports it; `default`, why it was played without being asked."""
    check_sequential_bound(bound)
    seed = check_int(seed, "seed", "audit_dpsgd", low=0)
    data_rng, game_rng, _ = seed_streams(seed)
    batches, scorer, facts = attack.batches(game, execution, data_rng, game_rng)
    facts = facts if default is None else {**facts, "default": default}
    return play_sequentially(owner="audit_dpsgd", game=game, bound=bound, seed=seed, subject=subject, play=batches.play,
                             scorer=lambda: scorer, attack=facts, execution=execution, store=batches.store,
                             beside=BESIDE)


def _arm_judge(bound: Bound, claim: Claim) -> ArmJudge:
    """Return how `dataset="auto"` screening judges each (dataset, canary) arm: ranked by μ̂ = √2·Φ⁻¹(AUC) of its
    scores (`auc_mu`), reported with the ε its screening runs certify alone under `bound` (`_arm_epsilon`).

    Sound whatever they say: they only choose the dataset and describe the
    choice, and the game's bound is certified on runs apart from screening's.
    """
    return ArmJudge(rank=auc_mu, epsilon=functools.partial(_arm_epsilon, bound=bound, claim_delta=claim.delta))


def _arm_epsilon(obs: Observations, rng: np.random.Generator, *, bound: Bound, claim_delta: float) -> float:
    """Return the ε lower bound that one arm's screening scores certify alone, as a multi-run game of their runs, under
    `bound` at its δ (else the claim's), holding as `certify`'s does at the bound's confidence."""
    return certify(obs, MultiRun(obs.size), bound, delta=bound.delta_for(claim_delta), rng=rng).epsilon


def _game(game: Game | None, runs: int | str | None, owner: str, bound: Bound) -> tuple[Game, str | None]:
    """Return the game and why it is sequential when neither was asked for (None otherwise): `game`, or
    `MultiRun(runs)` for the `runs` shorthand ("sequential": `MultiRun(TRAINING_RUNS, sequential=True)`); with
    neither, the sequential game of at most TRAINING_RUNS runs where `bound` lets sequences certify (DEFAULT_WHY),
    else the fixed `MultiRun(TRAINING_RUNS)`. The choice reads the arguments only, never a run."""
    if game is not None and runs is not None:
        raise InvalidParameterError(f"Pass either 'game' or its shorthand 'runs' to {owner}, not both.")
    if game is None and runs is None and sequences_certify_runs(bound):
        return MultiRun(TRAINING_RUNS, sequential=True), DEFAULT_WHY
    if runs == SEQUENTIAL:
        game = MultiRun(TRAINING_RUNS, sequential=True)
    game = MultiRun(TRAINING_RUNS if runs is None else runs) if game is None else game
    if isinstance(game, MultiRun):
        check_int(game.runs, "runs", owner, low=MIN_RUNS)
    if isinstance(game, OneRun) and game.canaries is None:
        raise InvalidParameterError(f"The one-run game of {owner} needs a number of canaries, e.g. OneRun(100).")
    return game, None


def _dataset(dataset: Any, target: DPSGDTarget, game: Game, owner: str) -> str | int:
    """Return the dataset the audit plays: `dataset`, with "auto" meaning "user" for a one-run game or a target that
    trains on its configuration's data. Raises unless it is a choice of DATASET_CHOICES or an int ≥ 1, and "auto" or
    "user" unless the target's dataset may be picked."""
    valid = dataset in DATASET_CHOICES or (isinstance(dataset, int) and not isinstance(dataset, bool) and dataset >= 1)
    if not valid:
        raise InvalidParameterError(
            f"The 'dataset' parameter of {owner} (--data for a module:attr target) picks what a UserTrainer trains on: "
            f"'{AUTO}' (screened), '{USER_DATA}' (its data), '{CANARIES_ONLY}' (the canaries alone), '{ADVERSARIAL}' "
            f"(rows against the canaries), '{BATCH_ADVERSARIAL}' (units against one canary) or an int k ≥ 1 (k of its rows); "
            f"got {dataset!r} instead."
        )
    if dataset not in (AUTO, USER_DATA) and not target.picks_dataset:
        raise InvalidParameterError(
            "The dataset option picks what a UserTrainer trains on; dpaudit's trainer and Opacus train on DPSGDConfig(data=...)."
        )
    if dataset == AUTO and (not target.picks_dataset or isinstance(game, OneRun)):
        return USER_DATA
    return dataset


def _canary(canary: str, target: DPSGDTarget, seed: int) -> str:
    """Return the canary kind played: `canary`, or for "auto" "dirac" when gradient canaries can enter the target's
    runs (a probe run outside the game, from its own stream of `seed`), else "crafted"."""
    if canary != AUTO:
        return canary
    probe_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(PROBE_STREAM,)))
    return DIRAC if target.takes_gradients(probe_rng) else CRAFTED


def _check_choices(target: DPSGDTarget, threat: str) -> None:
    """Raise unless `threat` is a threat model and the target's claim is about add-remove neighbours (one sentence each)."""
    if threat not in THREATS:
        raise InvalidParameterError(f"The threat model must be one of {', '.join(THREATS)}; got {threat!r} instead.")
    if target.claim.relation is not Relation.ADD_REMOVE:
        raise InvalidParameterError(
            f"The DP-SGD games add a canary to {target.name}'s data or leave it out, an add-remove step, and its "
            "claim is about replace-one neighbours, which says nothing of such pairs: state an add-remove claim."
        )
