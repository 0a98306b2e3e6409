"""DP-SGD membership games: which canaries went into a training run, and their scores after it.

Multi-run (Jagielski et al. 2020; Nasr et al. 2023): R independent runs on
the same data and initialisation; exactly ⌊R/2⌋ of them, chosen by a seeded
permutation, hold the canary. One-run (Steinke, Nasr and Jagielski, NeurIPS
2023): one run, m canaries each included independently with probability ½.
Run i draws all its randomness from its own child of the audit's seed, so a
run's scores do not depend on where, in which order or beside which other
runs it ran: the game can be spread over processes, resumed after an
interruption, and, with dpaudit's trainer, played in groups of runs trained
side by side (`BatchedDPSGDTrainer`).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Sequence

import numpy as np
from dpaudit.attacks.dpsgd.canaries import DPSGDCanaries
from dpaudit.attacks.dpsgd.scores import LOSS, WHITE_BOX, canary_scores
from dpaudit.attacks.dpsgd.user_scores import user_white_box_scores
from dpaudit.mechanisms.dpsgd.builtin_target import BUILTIN_TARGETS, DPAUDIT, OPACUS
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.torch_support import import_torch
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

__all__ = [
    "DPAUDIT",
    "OPACUS",
    "PROBE_STREAM",
    "RUN_STREAM",
    "SCREEN_STREAM",
    "TARGETS",
    "DPSGDGame",
    "group_size",
    "multi_run_membership",
    "one_torch_thread",
    "play_multi_run",
    "play_multi_run_group",
    "play_one_run",
    "resolve_trainer",
]

TARGETS = BUILTIN_TARGETS
RUN_STREAM = 3  # runs use children (3, i) of the audit's SeedSequence; 0–2 are canaries, game, estimator
SCREEN_STREAM = 4  # screening runs of candidate datasets use children (4, d, i)
PROBE_STREAM = 5  # the probe run that tells canary="auto" whether gradient canaries enter a user's loop


@dataclasses.dataclass(frozen=True)
class DPSGDGame:
    """Everything a worker needs to play one run: trainer (a name or a `UserTrainer`), canaries, θ₀, threat, score."""

    config: DPSGDConfig
    target: Any
    canaries: DPSGDCanaries
    theta0: np.ndarray | None
    threat: str
    score: str = LOSS

    def play(self, included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Train once with the canaries marked in `included`; return every canary's score."""
        trainer = resolve_trainer(self.config, self.target)
        trajectory = trainer.train(self.theta0, self.canaries.insertions(included), rng,
                                   keep_iterates=self.threat == WHITE_BOX)
        if self.threat == WHITE_BOX and isinstance(trainer, UserTrainer):
            return user_white_box_scores(trajectory.iterates, self.canaries, losses=trainer.losses,
                                         settings=trajectory.settings, rows=trajectory.rows, data=trainer.data)
        return canary_scores(self.theta0, trajectory.iterates, self.canaries, threat=self.threat,
                             trainer=trainer, score=self.score)

    def play_side_by_side(self, included: np.ndarray, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """Train R = len(rngs) runs of dpaudit's trainer at once, run r with the canaries marked in `included[r]`; return (R, m) scores.

        Row r is what `play(included[r], rngs[r])` returns, up to float32 rounding.
        """
        trainer = resolve_trainer(self.config, self.target)
        iterates = trainer.train_runs(self.theta0, [self.canaries.insertions(row) for row in included], rngs,
                                      keep_iterates=self.threat == WHITE_BOX)
        return canary_scores(self.theta0, iterates, self.canaries, threat=self.threat, trainer=trainer, score=self.score)


def resolve_trainer(config: DPSGDConfig, target: Any) -> Any:
    """Return the trainer of `target`: "dpaudit" or "opacus" (built once per process), or a user's trainer as is."""
    return _trainer_for(config, target) if isinstance(target, str) else target


@functools.lru_cache(maxsize=4)
def _trainer_for(config: DPSGDConfig, target: str) -> Any:
    """Return this process' trainer for `config` (built once: loading data and compiling per-example grads)."""
    import_torch()
    data = load_data(config.data)
    if target == OPACUS:
        from dpaudit.mechanisms.dpsgd.opacus_target import OpacusTrainer

        return OpacusTrainer(config, data)
    from dpaudit.mechanisms.dpsgd.batched_trainer import BatchedDPSGDTrainer

    return BatchedDPSGDTrainer(config, data)


def one_torch_thread() -> None:
    """Make torch compute on one thread: run on each Dask worker, so that parallel runs do not oversubscribe cores."""
    import_torch().set_num_threads(1)


def _run_rng(seed: int, index: int, stream: tuple[int, ...] = (RUN_STREAM,)) -> np.random.Generator:
    """Return run `index`'s generator: child (*stream, index) of `SeedSequence(seed)` (the game's runs: (RUN_STREAM, index))."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(*stream, index)))


def multi_run_membership(runs: int, rng: np.random.Generator, canaries: int = 1) -> np.ndarray:
    """Return which runs hold which canary, (runs,) for one canary, else (runs, canaries).

    One canary: exactly ⌊runs/2⌋ runs, by a seeded permutation. Several (a
    ladder of magnitudes): each canary in each run independently with
    probability ½, so that given one canary's column the runs stay
    independent, each drawn from the same mixture over the other canaries
    (a mixture of neighbouring pairs, as private as each pair).
    """
    if canaries == 1:
        return rng.permutation(runs) < runs // 2
    return rng.random((runs, canaries)) < 0.5


def play_multi_run(game: DPSGDGame, index: int, member: Any, seed: int,
                   stream: tuple[int, ...] = (RUN_STREAM,)) -> np.ndarray:
    """Play run `index` of a multi-run game (its canaries in as `member` says); return the canaries' scores."""
    return game.play(np.atleast_1d(member), _run_rng(seed, index, stream))


def group_size(game: DPSGDGame) -> int:
    """Return how many runs of `game` to train side by side: dpaudit's trainer fits its memory budget, any other target 1."""
    if game.target != DPAUDIT:
        return 1
    return resolve_trainer(game.config, game.target).group_size(keep_iterates=game.threat == WHITE_BOX)


def play_multi_run_group(game: DPSGDGame, indices: Sequence[int], members: np.ndarray, seed: int,
                         stream: tuple[int, ...] = (RUN_STREAM,)) -> list[np.ndarray]:
    """Play runs `indices` of a multi-run game (run i's canaries in as `members[i]` says); return their scores, in order.

    Each run draws from its own stream, so its scores do not depend on the
    group: dpaudit's trainer trains the group side by side, any other
    target one run after the other. `stream` keys the runs' generators
    (screening runs of candidate datasets use their own).
    """
    if game.target != DPAUDIT:
        return [play_multi_run(game, i, members[i], seed, stream) for i in indices]
    included = np.stack([np.atleast_1d(members[i]) for i in indices])
    return list(game.play_side_by_side(included, [_run_rng(seed, i, stream) for i in indices]))


def play_one_run(game: DPSGDGame, included: np.ndarray, seed: int) -> np.ndarray:
    """Play the single run of a one-run game; return the m canaries' scores."""
    return game.play(included, _run_rng(seed, 0))
