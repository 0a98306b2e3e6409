"""DP-SGD audits: train with canaries (dpaudit's trainer or Opacus), score them, certify ε.

Flow, as for every canary audit: settings → canaries (seeded) → training
runs (in process or on Dask workers, each finished run saved to a results
folder) → `Observations` → the existing estimators → `MembershipResult`,
beside the claim (dp_accounting's PLD for dpaudit's trainer, Opacus' own
accountant for Opacus) and dpaudit's PLD upper bound of what the code does.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from dpaudit.attacks.dpsgd.canaries import DIRAC, QUIET, make_canaries
from dpaudit.attacks.dpsgd.game import (
    DPAUDIT,
    OPACUS,
    TARGETS,
    DPSGDGame,
    group_size,
    multi_run_membership,
    one_torch_thread,
    play_multi_run_group,
    play_one_run,
    resolve_trainer,
)
from dpaudit.attacks.dpsgd.scores import LOSS, THREATS, WHITE_BOX
from dpaudit.attacks.dpsgd.user_canaries import user_canaries
from dpaudit.attacks.games import Game, MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.membership import Played, Subject, run_membership_audit
from dpaudit.audit.estimators.certify import Bound
from dpaudit.audit.execution.execution import Execution
from dpaudit.audit.execution.fingerprint import fingerprint
from dpaudit.audit.execution.interrupted import Interrupted
from dpaudit.audit.execution.progress import progress_of
from dpaudit.audit.execution.run_store import RunStore
from dpaudit.audit.execution.runs import run_groups
from dpaudit.audit.results.result import MembershipResult
from dpaudit.audit.theory.upper_bound import upper_bound
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Claim, Relation
from dpaudit.mechanisms.dpsgd.accounting import actual_event, claimed_event, pld_epsilon, rdp_epsilon
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer
from dpaudit.validation import check_int

__all__ = ["DPSGDInterrupted", "audit_dpsgd"]

MIN_RUNS = 10
MIN_GROUPS = 8  # runs trained side by side are split in at least this many groups: saved as they go, spread over workers
USER_DATA, CANARIES_ONLY = "user", "canaries"
DATASET_CHOICES = (USER_DATA, CANARIES_ONLY)


DPSGDInterrupted = Interrupted
"""The name this interruption had before every audit shared `Interrupted`: Ctrl-C during the training runs,
`done` of `total` runs saved in `store` (None without a results folder)."""


def audit_dpsgd(
    config: DPSGDConfig | None = None,
    *,
    target: str | UserTrainer = DPAUDIT,
    game: Game | None = None,
    bound: Bound = Bound(),
    canary: str = DIRAC,
    dirac_target: str = QUIET,
    threat: str = WHITE_BOX,
    scorer: str = LOSS,
    runs: int | None = None,
    dataset: str | int = USER_DATA,
    execution: Execution = Execution(),
    seed: int = 0,
) -> MembershipResult:
    """Return the certified ε of a DP-SGD training run's claim, from many training runs or from one.

    Args:
        config: the training run (`DPSGDConfig`; unused for a `UserTrainer`).
        target: "dpaudit" (this package's trainer, bugs included), "opacus",
            or a `UserTrainer` wrapping your own training function.
        game: `MultiRun(runs)` (default 200 runs, half of them, by a seeded
            permutation, with the canary) or `OneRun(canaries)` (one run, each
            canary in with probability ½).
        bound: how the scores are certified (estimator, confidence, δ: default the claim's).
        canary: "dirac" (gradient-space), "crafted" or "mislabelled" (input-space).
        dirac_target: Dirac coordinates: "quiet" (least touched at θ₀) or "bias".
        threat: "white-box" (every iterate) or "black-box" (final parameters).
        scorer: black-box score of input canaries: "loss" or "loss-difference".
        runs: shorthand for `game=MultiRun(runs)`.
        dataset: what a `UserTrainer` trains on besides the canaries: "user"
            (your data), an int k (k of your rows, drawn from the seed) or
            "canaries" (the canaries alone). Sound for each: the claim is for
            every dataset; fewer rows leave the canary's gradient fewer
            others to hide among, so the audit is stronger.
        execution: where the runs go (`Execution`: Dask workers or scheduler, progress, the run store to keep
            finished runs in and resume from).
        seed: one seed for θ₀, the canaries, every run and the estimator.

    Returns:
        A `MembershipResult`: the claim (dp_accounting's PLD for dpaudit's
        trainer, Opacus' PRV accountant for Opacus, yours for a
        `UserTrainer`), dpaudit's PLD upper bound of what the code does, and
        the lower bound, which holds with probability ≥ `bound.confidence`
        (GDP and f-DP one-run: under the Gaussian trade-off assumption they
        name). Sound as the estimators are: runs are independent given the
        seed, and each canary's inclusion is decided before training.

    Raises:
        InvalidParameterError: on bad input (one sentence).
        Interrupted: on Ctrl-C, after saving the finished runs in the run store.
    """
    config = config or DPSGDConfig()
    owner = "audit_dpsgd"
    game = _game(game, runs, owner)
    _check_choices(target, threat, canary, config)
    _check_dataset(dataset, target, owner)
    trainer = resolve_trainer(config, target)
    subject, facts = _accounting(target, trainer)
    one_run = isinstance(game, OneRun)
    store: RunStore | None = None

    def play(canary_rng: np.random.Generator, game_rng: np.random.Generator) -> Played:
        m = game.canaries if one_run else 1
        if isinstance(target, str):
            theta0 = trainer.model.initial(canary_rng).cpu().numpy()
            made = make_canaries(canary, m, model=trainer.model, data=trainer.data, theta0=theta0,
                                 clip_norm=config.clip_norm, rng=canary_rng, target=dirac_target)
            runner, trained_on = target, {}
        else:
            theta0, (runner, trained_on) = None, _dataset(target, dataset, canary_rng)
            made = user_canaries(canary, m, runner, canary_rng, ladder=not one_run, target=dirac_target)
        played = DPSGDGame(config, runner, made, theta0, threat, scorer)
        setup = {"config": config.to_dict(), "target": target if isinstance(target, str) else target.name,
                 "canary": canary, "dirac_target": dirac_target, "threat": threat, "score": scorer,
                 "one_run": one_run, "runs": 1 if one_run else game.runs, "canaries": m, "seed": seed,
                 **({"dataset": dataset} if trained_on else {})}
        data = resolve_trainer(config, runner).data
        setup["fingerprint"] = fingerprint(setup=setup, target=_identity(target, config), canaries=made,
                                           trained_on=(data.x, data.y), game=game)
        nonlocal store
        store = RunStore(execution.store, setup, resume=execution.resume) if execution.store else None
        if one_run:
            obs = _one_run(played, m, game_rng, seed, store)
        else:
            obs = _multi_run(played, game.runs, game_rng, seed, store, execution)
        attack = {"target": target if isinstance(target, str) else trainer.name, "threat": threat,
                  "canary": made.kind, "training_rows": resolve_trainer(config, runner).data.rows, **trained_on,
                  **_magnitudes(made), **facts}
        name = f"{threat} {made.kind}" + (f" ({scorer})" if threat != WHITE_BOX and made.kind != DIRAC else "")
        return Played(obs, name, attack)

    result = run_membership_audit(owner=owner, game=game, bound=bound, seed=seed, subject=subject, play=play)
    if store:
        store.write_result(result.to_dict())
    return result


def _game(game: Game | None, runs: int | None, owner: str) -> Game:
    """Return the game: `game`, or `MultiRun(runs)` for the `runs` shorthand (default 200 runs)."""
    if game is not None and runs is not None:
        raise InvalidParameterError(f"Pass either 'game' or its shorthand 'runs' to {owner}, not both.")
    game = MultiRun(200 if runs is None else runs) if game is None else game
    if isinstance(game, MultiRun):
        check_int(game.runs, "runs", owner, low=MIN_RUNS)
    if isinstance(game, OneRun) and game.canaries is None:
        raise InvalidParameterError(f"The one-run game of {owner} needs a number of canaries, e.g. OneRun(100).")
    return game


def _check_dataset(dataset: Any, target: Any, owner: str) -> None:
    """Raise unless `dataset` is "user", "canaries" or an int ≥ 1, and "user" unless the target is a `UserTrainer`."""
    valid = dataset in DATASET_CHOICES or (isinstance(dataset, int) and not isinstance(dataset, bool) and dataset >= 1)
    if not valid:
        raise InvalidParameterError(
            f"The 'dataset' parameter of {owner} (--data for a module:attr target) picks what a UserTrainer trains on: "
            f"'{USER_DATA}' (its data), '{CANARIES_ONLY}' (the canaries alone) or an int k ≥ 1 (k of its rows); "
            f"got {dataset!r} instead."
        )
    if dataset != USER_DATA and not isinstance(target, UserTrainer):
        raise InvalidParameterError(
            "The dataset option picks what a UserTrainer trains on; dpaudit's trainer and Opacus train on DPSGDConfig(data=...)."
        )


def _dataset(target: UserTrainer, dataset: str | int, rng: np.random.Generator) -> tuple[UserTrainer, dict[str, Any]]:
    """Return the user's trainer on the dataset the audit picks, and the dataset's name for the result."""
    n = target.data.rows
    if dataset == CANARIES_ONLY:
        return target.on_rows(np.arange(0)), {"dataset": "the canaries alone"}
    if dataset == USER_DATA or dataset >= n:
        return target, {"dataset": f"the user's data ({n} rows)"}
    rows = np.sort(rng.choice(n, size=dataset, replace=False))
    return target.on_rows(rows), {"dataset": f"{dataset} of the user's {n} rows (drawn from the seed)"}


def _identity(target: str | UserTrainer, config: DPSGDConfig) -> Any:
    """Return what identifies the target for a run store's fingerprint: a trainer's name and settings, or a user's code and data."""
    if isinstance(target, str):
        return {"target": target, "config": config.to_dict()}
    data = target.user_data
    return {"name": target.name, "train": target.train_fn, "losses": target.losses_fn, "x": data.x, "y": data.y,
            "claim": target.claim, "event": target.event, "settings": target.settings}


def _magnitudes(made: Any) -> dict[str, Any]:
    """Return the crafted canaries' magnitudes for the result, when chosen to reach the clip norm."""
    return {} if made.magnitudes is None else {"canary_magnitudes": [float(a) for a in made.magnitudes]}


def _check_choices(target: Any, threat: str, canary: str, config: DPSGDConfig) -> None:
    if threat not in THREATS:
        raise InvalidParameterError(f"The threat model must be one of {', '.join(THREATS)}; got {threat!r} instead.")
    if isinstance(target, UserTrainer):
        if target.claim.relation is not Relation.ADD_REMOVE:
            raise InvalidParameterError(
                f"The DP-SGD games add a canary to {target.name}'s data or leave it out, an add-remove step, and its "
                "claim is about replace-one neighbours, which says nothing of such pairs: state an add-remove claim."
            )
        return
    if target not in TARGETS:
        raise InvalidParameterError(
            f"The target must be one of {', '.join(TARGETS)} or a UserTrainer; got {target!r} instead."
        )
    if target == OPACUS and config.bug is not None:
        raise InvalidParameterError("The Opacus target takes no bug option; the bugs are variants of dpaudit's trainer.")


def _one_run(game: DPSGDGame, m: int, rng: np.random.Generator, seed: int, store: RunStore | None) -> Observations:
    included = rng.random(m) < 0.5
    done = store.finished() if store else {}
    scores = done[0]["scores"] if 0 in done else play_one_run(game, included, seed)
    if store and 0 not in done:
        store.append({"run": 0, "scores": scores})
    return Observations(np.asarray(scores, dtype=float), included)


def _multi_run(game: DPSGDGame, runs: int, rng: np.random.Generator, seed: int, store: RunStore | None,
               execution: Execution) -> Observations | tuple[Observations, ...]:
    """Return the runs' scores and truth: one `Observations`, or one per canary of a ladder."""
    k = game.canaries.size
    members = multi_run_membership(runs, rng, k)
    scores = {i: record["score"] for i, record in (store.finished() if store else {}).items() if i < runs}
    pending = [i for i in range(runs) if i not in scores]

    def finish(index: int, value: np.ndarray) -> None:
        scores[index] = float(value[0]) if k == 1 else [float(v) for v in value]
        if store:
            member = bool(members[index]) if k == 1 else [bool(b) for b in members[index]]
            store.append({"run": index, "member": member, "score": scores[index]})

    with progress_of(execution.progress, runs, label="training runs") as bar:
        if bar and scores:
            bar(len(scores))
        try:
            run_groups(lambda group: play_multi_run_group(game, group, members, seed), pending,
                       size=_group_size(game, len(pending)), backend=execution.backend, finish=finish, progress=bar,
                       worker_setup=one_torch_thread)
        except KeyboardInterrupt:
            raise Interrupted(None, done=len(scores), total=runs, store=store.path if store else None) from None
    table, truth = np.array([scores[i] for i in range(runs)]).reshape(runs, k), members.reshape(runs, k)
    arms = tuple(Observations(table[:, j], truth[:, j]) for j in range(k))
    return arms[0] if k == 1 else arms


def _group_size(game: DPSGDGame, pending: int) -> int:
    """Return how many runs each task plays: the game's group size, but small enough for MIN_GROUPS groups."""
    return min(group_size(game), max(1, math.ceil(pending / MIN_GROUPS)))


def _accounting(target: Any, trainer: Any) -> tuple[Subject, dict[str, Any]]:
    """Return what the audit is about (name, parameters, claim, dpaudit's upper bound at δ) and accounting facts."""
    if isinstance(target, UserTrainer):
        event = target.event
        return Subject(target.name, {}, target.claim, lambda delta: None if event is None else upper_bound(event, delta=delta)), {}
    config, rows = trainer.config, trainer.data.rows
    facts: dict[str, Any] = {"model": config.model, "data": config.data, "sample_rate": trainer.sample_rate}
    if target == OPACUS:
        from dpaudit.mechanisms.dpsgd.opacus_target import opacus_epsilon

        facts["opacus_prv_epsilon"] = opacus_epsilon(config, rows)
        facts["opacus_rdp_epsilon"] = opacus_epsilon(config, rows, accountant="rdp")
        actual = claimed_event(dataclasses.replace(config, sample_rate=trainer.sample_rate), rows)
        claim = Claim(facts["opacus_prv_epsilon"], config.delta, Relation.ADD_REMOVE)
        name = "opacus"
    else:
        claimed, actual = claimed_event(config, rows), actual_event(config, rows)
        facts["claim_rdp_epsilon"] = rdp_epsilon(claimed, config.delta)
        claim = Claim(pld_epsilon(claimed, config.delta), config.delta, Relation.ADD_REMOVE)
        name = "dpsgd" + (f"_{config.bug}" if config.bug else "")
    return Subject(name, config.to_dict(), claim, lambda delta: upper_bound(actual, delta=delta)), facts
