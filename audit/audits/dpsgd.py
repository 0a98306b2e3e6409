"""DP-SGD audits: train with canaries (dpaudit's trainer or Opacus), score them, certify ε.

Flow, as for every canary audit: settings → canaries (seeded) → training
runs (in process or on Dask workers, each finished run saved to a results
folder) → `Observations` → the existing estimators → `CanaryAuditResult`,
beside the claim (dp_accounting's PLD for dpaudit's trainer, Opacus' own
accountant for Opacus) and dpaudit's PLD upper bound of what the code does.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
from dpaudit.attacks.dpsgd.canaries import DIRAC, QUIET, make_canaries
from dpaudit.attacks.dpsgd.game import (
    DPAUDIT,
    OPACUS,
    TARGETS,
    DPSGDGame,
    multi_run_membership,
    one_torch_thread,
    play_multi_run,
    play_one_run,
    resolve_trainer,
)
from dpaudit.attacks.dpsgd.scores import LOSS, THREATS, WHITE_BOX
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.canaries import (
    MULTI_RUN,
    ONE_RUN,
    CanaryAuditResult,
    guess_counts_from,
    multi_run_bound,
    one_run_bound,
    seed_streams,
)
from dpaudit.audit.estimators.thresholds import DominatingPair, ThresholdStrategy
from dpaudit.audit.execution.progress import trial_progress
from dpaudit.audit.execution.run_store import RunStore
from dpaudit.audit.theory.upper_bound import UpperBound, upper_bound
from dpaudit.mechanisms.base import Claim, Relation
from dpaudit.mechanisms.dpsgd.accounting import actual_event, claimed_event, pld_epsilon, rdp_epsilon
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer
from dpaudit.mechanisms.errors import InvalidParameterError
from dpaudit.mechanisms.validation import check_delta, check_int, check_probability_open

MIN_RUNS = 10


class DPSGDInterrupted(KeyboardInterrupt):
    """Ctrl-C during the training runs; `finished` runs are saved in `folder` (None without a results folder)."""

    def __init__(self, finished: int, total: int, folder: Path | None) -> None:
        super().__init__()
        self.finished, self.total, self.folder = finished, total, folder


@dataclasses.dataclass(frozen=True)
class Execution:
    """Where the runs go: a results folder (and whether to resume it), Dask workers or scheduler, a progress bar."""

    out: str | Path | None = None
    resume: bool = False
    workers: int | None = None
    scheduler: str | None = None
    progress: bool = False


def audit_dpsgd(
    config: DPSGDConfig | None = None,
    *,
    target: str | UserTrainer = DPAUDIT,
    canary: str = DIRAC,
    dirac_target: str = QUIET,
    threat: str = WHITE_BOX,
    score: str = LOSS,
    runs: int = 200,
    one_run: bool = False,
    canaries: int = 100,
    estimator: str | None = None,
    confidence: float = 0.95,
    delta: float | None = None,
    k_plus: int | None = None,
    k_minus: int | None = None,
    strategy: ThresholdStrategy = DominatingPair(),
    execution: Execution = Execution(),
    seed: int = 0,
) -> CanaryAuditResult:
    """Return the certified ε of a DP-SGD training run's claim, from `runs` runs or (`one_run`) one run.

    Args:
        config: the training run (`DPSGDConfig`; unused for a `UserTrainer`).
        target: "dpaudit" (this package's trainer, bugs included), "opacus",
            or a `UserTrainer` wrapping your own training function.
        canary: "dirac" (gradient-space), "crafted" or "mislabelled" (input-space).
        dirac_target: Dirac coordinates: "quiet" (least touched at θ₀) or "bias".
        threat: "white-box" (every iterate) or "black-box" (final parameters).
        score: black-box score of input canaries: "loss" or "loss-difference".
        runs: multi-run: training runs, half of them (by a seeded permutation) with the canary.
        one_run, canaries: one training run with `canaries` canaries, each in with probability ½.
        estimator: "threshold" (default) or "gdp" multi-run; "one-run" (default) or "one-run-fdp".
        confidence, delta: of the lower bound (δ defaults to the claim's).
        k_plus, k_minus: one-run guess counts (default: a few, paid for).
        strategy: how a multi-run threshold is paid for (default: the dominating-pair test).
        execution: results folder and resume, Dask workers or scheduler, progress bar.
        seed: one seed for θ₀, the canaries, every run and the estimator.

    Returns:
        A `CanaryAuditResult`: the claim (dp_accounting's PLD for dpaudit's
        trainer, Opacus' PRV accountant for Opacus, yours for a
        `UserTrainer`), dpaudit's PLD upper bound of what the code does, and
        the lower bound, which holds with probability ≥ `confidence` (GDP and
        f-DP one-run: under the Gaussian trade-off assumption they name).
        Sound as the estimators are: runs are independent given the seed, and
        each canary's inclusion is decided before training.

    Raises:
        InvalidParameterError: on bad input (one sentence).
        DPSGDInterrupted: on Ctrl-C, after saving the finished runs in the results folder.
    """
    config = config or DPSGDConfig()
    owner = "audit_dpsgd"
    _check_choices(target, threat, canary, config)
    confidence = check_probability_open(confidence, "confidence", owner)
    seed = check_int(seed, "seed", owner, low=0)
    start = time.perf_counter()
    trainer = resolve_trainer(config, target)
    claim_delta = target.claim.delta if isinstance(target, UserTrainer) else config.delta
    at_delta = claim_delta if delta is None else check_delta(delta, owner)
    canary_rng, game_rng, estimator_rng = seed_streams(seed)
    theta0 = trainer.model.initial(canary_rng).cpu().numpy() if isinstance(target, str) else None
    m = canaries if one_run else 1
    check_int(m, "canaries", owner, low=2 if one_run else 1)
    made = make_canaries(canary, m, model=getattr(trainer, "model", None), data=trainer.data, theta0=theta0,
                         clip_norm=config.clip_norm, rng=canary_rng, target=dirac_target)
    game = DPSGDGame(config, target, made, theta0, threat, score)
    setup = {"config": config.to_dict(), "target": target if isinstance(target, str) else target.name,
             "canary": canary, "dirac_target": dirac_target, "threat": threat, "score": score, "one_run": one_run,
             "runs": 1 if one_run else runs, "canaries": m, "seed": seed}
    store = RunStore(execution.out, setup, resume=execution.resume) if execution.out else None
    if one_run:
        obs = _one_run(game, m, game_rng, seed, store)
        bound = one_run_bound(obs, estimator=estimator or "one-run", delta=at_delta, confidence=confidence,
                              guess_counts=guess_counts_from(k_plus, k_minus), rng=estimator_rng)
    else:
        check_int(runs, "runs", owner, low=MIN_RUNS)
        obs = _multi_run(game, runs, game_rng, seed, store, execution)
        bound = multi_run_bound(obs, estimator=estimator or "threshold", delta=at_delta, confidence=confidence,
                                strategy=strategy, rng=estimator_rng)
    result = _result(ONE_RUN if one_run else MULTI_RUN, bound, game, trainer, at_delta, obs, seed, start, made)
    if store:
        store.write_result(result.to_dict())
    return result


def _check_choices(target: Any, threat: str, canary: str, config: DPSGDConfig) -> None:
    if threat not in THREATS:
        raise InvalidParameterError(f"The threat model must be one of {', '.join(THREATS)}; got {threat!r} instead.")
    if isinstance(target, UserTrainer):
        if threat == WHITE_BOX or canary == DIRAC:
            raise InvalidParameterError(
                "A user's training function releases only its final parameters: use --threat black-box with "
                "mislabelled or crafted canaries."
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
               execution: Execution) -> Observations:
    members = multi_run_membership(runs, rng)
    scores = {i: record["score"] for i, record in (store.finished() if store else {}).items() if i < runs}
    pending = [i for i in range(runs) if i not in scores]

    def finish(index: int, value: float) -> None:
        scores[index] = value
        if store:
            store.append({"run": index, "member": bool(members[index]), "score": value})

    with trial_progress(runs, label="training runs", enabled=execution.progress) as bar:
        if bar and scores:
            bar(len(scores))
        try:
            _execute(game, pending, members, seed, execution, finish, bar)
        except KeyboardInterrupt:
            raise DPSGDInterrupted(len(scores), runs, store.path if store else None) from None
    return Observations(np.array([scores[i] for i in range(runs)]), members)


def _execute(game: DPSGDGame, pending: list[int], members: np.ndarray, seed: int, execution: Execution,
             finish: Callable[[int, float], None], bar: Any) -> None:
    """Play the pending runs in process, or on a Dask cluster when workers or a scheduler are given."""
    if execution.workers is None and execution.scheduler is None:
        for index in pending:
            finish(index, play_multi_run(game, index, bool(members[index]), seed))
            if bar:
                bar(1)
        return
    from dpaudit.audit.execution.backends import dask_client

    with dask_client(workers=execution.workers, scheduler=execution.scheduler) as client:
        from distributed import as_completed

        client.run(one_torch_thread)
        futures = {client.submit(play_multi_run, game, i, bool(members[i]), seed, pure=False): i for i in pending}
        try:
            for future, value in as_completed(list(futures), with_results=True):
                finish(futures[future], value)
                if bar:
                    bar(1)
        finally:
            client.cancel(list(futures))


def _accounting(target: Any, trainer: Any, delta: float) -> tuple[str, dict[str, Any], Claim, UpperBound | None, dict]:
    """Return the target's name, parameters, claim, dpaudit's upper bound at δ and accounting facts."""
    if isinstance(target, UserTrainer):
        upper = None if target.event is None else upper_bound(target.event, delta=delta)
        return target.name, {}, target.claim, upper, {}
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
    return name, config.to_dict(), claim, upper_bound(actual, delta=delta), facts


def _result(game_kind: str, bound: Any, game: DPSGDGame, trainer: Any, delta: float, obs: Observations,
            seed: int, start: float, made: Any) -> CanaryAuditResult:
    name, params, claim, upper, facts = _accounting(game.target, trainer, delta)
    facts = {"target": game.target if isinstance(game.target, str) else trainer.name, "threat": game.threat,
             "canary": made.kind, "training_rows": trainer.data.rows, **facts}
    scorer = f"{game.threat} {made.kind}" + (f" ({game.score})" if game.threat != WHITE_BOX and made.kind != DIRAC else "")
    return CanaryAuditResult(
        game=game_kind, lower_bound=bound, scorer=scorer, seconds=time.perf_counter() - start, seed=seed,
        mechanism=name, params=params, claim=claim, upper_bound=upper, observations=obs, attack=facts,
    )
