"""The DP-SGD attack an audit plays: its canaries, the dataset they join, the runs, their scores, the report's facts.

`DPSGDAttack.play(game, execution, data_rng, game_rng)` is the `play` of
`run_membership_audit`: canaries (and for a user's loop the dataset, chosen
or screened) from the data stream, membership from the game stream, runs
seeded by the audit's seed, each finished run kept in the execution's run
store. What ranks the screened datasets and bounds each arm comes down from
the entry point (`ArmJudge`): the attack never imports the audit layer.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np
from dpaudit.attacks.dpsgd.audit_datasets import AUTO, AuditDataset, candidate_datasets, user_dataset
from dpaudit.attacks.dpsgd.canaries import DIRAC, DPSGDCanaries, make_canaries
from dpaudit.attacks.dpsgd.game import DPSGDGame, resolve_trainer
from dpaudit.attacks.dpsgd.run_batches import RunBatches
from dpaudit.attacks.dpsgd.runs import multi_run, one_run
from dpaudit.attacks.dpsgd.scores import WHITE_BOX
from dpaudit.attacks.dpsgd.screening import ArmJudge, screen
from dpaudit.attacks.games import Game, MultiRun, OneRun
from dpaudit.attacks.played import Played
from dpaudit.errors import MechanismError
from dpaudit.execution.execution import Execution
from dpaudit.execution.fingerprint import fingerprint
from dpaudit.execution.run_store import RunStore
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.target import DPSGDTarget

__all__ = ["DPSGDAttack"]


@dataclasses.dataclass(frozen=True)
class DPSGDAttack:
    """What the audit of `target` plays: canary kind and placement, threat, black-box score, dataset, seed, and how
    a screened dataset's arms are judged (`judge`)."""

    target: DPSGDTarget
    config: DPSGDConfig
    canary: str
    dirac_target: str
    threat: str
    scorer: str
    dataset: str | int
    seed: int
    judge: ArmJudge

    def play(self, game: Game, execution: Execution, data_rng: np.random.Generator,
             game_rng: np.random.Generator) -> Played:
        """Play `game`; return its scores, the scorer's name and the attack's facts (dataset, canaries, screening)."""
        one = isinstance(game, OneRun)
        m = game.canaries if one else 1
        runner, theta0, made, trained_on = self._setup(game, m, execution, data_rng, game_rng)
        played = DPSGDGame(self.config, runner, made, theta0, self.threat, self.scorer)
        data = resolve_trainer(self.config, runner).data
        store = execution.run_store(self._fingerprinted(execution, game, m, made, data, bool(trained_on)))
        if one:
            obs = one_run(played, m, game_rng, self.seed, store)
        else:
            obs = multi_run(played, game.runs, game_rng, self.seed, store, execution)
        return Played(obs, self._scorer_name(made), self._facts(made, data, trained_on), store)

    def _scorer_name(self, made: DPSGDCanaries) -> str:
        """Return the score played, in words: the threat, the canary kind, and a black-box score of input canaries."""
        return f"{self.threat} {made.kind}" + (f" ({self.scorer})" if self.threat != WHITE_BOX and made.kind != DIRAC else "")

    def _facts(self, made: DPSGDCanaries, data: Any, trained_on: dict[str, Any]) -> dict[str, Any]:
        """Return the attack's facts for the result: target, threat, canary, training rows, dataset and magnitudes."""
        return {"target": self.target.label, "threat": self.threat, "canary": made.kind, "training_rows": data.rows,
                **trained_on, **_magnitudes(made), **self.target.facts}

    def batches(self, game: MultiRun, execution: Execution, data_rng: np.random.Generator,
                game_rng: np.random.Generator) -> tuple[RunBatches, str, dict[str, Any]]:
        """Return the runs of a sequential multi-run `game` as batches to play, the scorer's name and the attack's facts.

        Canaries, dataset and the memberships of all `game.runs` runs are fixed here, before any run of the game.
        """
        runner, theta0, made, trained_on = self._setup(game, 1, execution, data_rng, game_rng)
        played = DPSGDGame(self.config, runner, made, theta0, self.threat, self.scorer)
        data = resolve_trainer(self.config, runner).data
        store = execution.run_store(self._fingerprinted(execution, game, 1, made, data, bool(trained_on)))
        batches = RunBatches.draw(played, game.runs, game_rng, self.seed, store, execution)
        return batches, self._scorer_name(made), self._facts(made, data, trained_on)

    def _setup(self, game: Game, m: int, execution: Execution, data_rng: np.random.Generator,
               game_rng: np.random.Generator) -> tuple[Any, np.ndarray | None, DPSGDCanaries, dict[str, Any]]:
        """Return the runner, θ₀ (None: a user's loop starts where its code starts), the canaries and the dataset's facts."""
        ladder = not isinstance(game, OneRun)
        if not self.target.picks_dataset:
            trainer = resolve_trainer(self.config, self.target.runner)
            theta0 = trainer.model.initial(data_rng).cpu().numpy()
            made = make_canaries(self.canary, m, model=trainer.model, data=trainer.data, theta0=theta0,
                                 clip_norm=self.config.clip_norm, rng=data_rng, target=self.dirac_target)
            return self.target.runner, theta0, made, {}
        if self.dataset != AUTO:
            chosen = user_dataset(self.target, self.dataset, self.canary, m, data_rng, ladder=ladder,
                                  dirac_target=self.dirac_target)
            return chosen.trainer, None, chosen.canaries, {"dataset": chosen.label}
        built = candidate_datasets(self.target, self.canary, data_rng, dirac_target=self.dirac_target)
        candidates = list(built.datasets)
        if not candidates:
            raise MechanismError(f"The loop failed on every dataset it could be audited on: {'; '.join(built.failed)}")
        found = screen(candidates, config=self.config, threat=self.threat, scorer=self.scorer, runs=game.runs,
                       game_rng=game_rng, estimator_rng=np.random.default_rng(data_rng.integers(2**63)), seed=self.seed,
                       execution=execution, judge=self.judge,
                       store_of=functools.partial(self._screening_store, execution))
        facts = {"dataset": found.dataset.label, "dataset_choice": "auto: the arm of highest AUC on screening runs",
                 "datasets_played": [c.label for c in candidates], "screening": list(found.arms),
                 **({"screening_failed": [*built.failed, *found.failed]} if built.failed or found.failed else {})}
        return found.dataset.trainer, None, found.dataset.canaries.only(found.arm), facts

    def _screening_store(self, execution: Execution, d: int, candidate: AuditDataset, runs: int,
                         stage: int) -> RunStore | None:
        """Return where candidate d's screening runs of `stage` are saved: the subfolder screening-d (a finalist's second
        stage: screening-d-stage) of the results folder."""
        setup = self._fingerprinted(execution, MultiRun(runs), candidate.canaries.size, candidate.canaries, candidate.trainer.data,
                                    True, screening=candidate.label, stage=stage)
        return execution.run_store(setup, part=f"screening-{d}" + (f"-{stage}" if stage else ""))

    def _fingerprinted(self, execution: Execution, game: Game, m: int, made: DPSGDCanaries, data: Any, dataset: bool,
                       screening: str | None = None, stage: int = 0) -> dict[str, Any]:
        """Return the run store's setup: everything that determines the runs (`screening`: the screened dataset's
        runs of `stage`), with their fingerprint when `execution` keeps runs (only a store reads it).

        Raises:
            UnfingerprintableError: a value the target's code reads cannot be fingerprinted (named in the message).
        """
        one = isinstance(game, OneRun)
        setup = {"config": self.config.to_dict(), "target": self.target.label, "canary": self.canary,
                 "dirac_target": self.dirac_target, "threat": self.threat, "score": self.scorer, "one_run": one,
                 "runs": 1 if one else game.runs, "canaries": m, "seed": self.seed,
                 **({"dataset": self.dataset} if dataset else {}), **({"screening": screening} if screening else {}),
                 **({"stage": stage} if stage else {})}
        if execution.store is None:
            return setup
        setup["fingerprint"] = fingerprint(setup=setup, target=self.target.identity(), canaries=made,
                                           trained_on=(data.x, data.y), game=game)
        return setup


def _magnitudes(made: DPSGDCanaries) -> dict[str, Any]:
    """Return the crafted canaries' magnitudes for the result, when chosen to reach the clip norm."""
    return {} if made.magnitudes is None else {"canary_magnitudes": [float(a) for a in made.magnitudes]}
