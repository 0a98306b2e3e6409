"""The training runs of a multi-run DP-SGD game played in batches, as a sequential audit asks for them.

Memberships of all `max_runs` runs are drawn before any run
(`game.multi_run_membership`); `RunBatches.play(start, count)` trains runs
start … start + count − 1, each from its own child of the seed, on the
execution's backend, keeps each finished run in the run store as it ends,
and reads the runs a store already holds (a resumed audit replays the
same batches and trains only the missing runs).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from dpaudit.attacks.dpsgd.game import (
    RUN_STREAM,
    DPSGDGame,
    group_size,
    multi_run_membership,
    one_torch_thread,
    play_multi_run_group,
)
from dpaudit.attacks.dpsgd.runs import MIN_GROUPS
from dpaudit.attacks.observations import Observations
from dpaudit.execution.execution import Execution
from dpaudit.execution.run_store import RunStore
from dpaudit.execution.runs import run_groups

__all__ = ["RunBatches"]


@dataclasses.dataclass(frozen=True)
class RunBatches:
    """The runs of a multi-run DP-SGD game: its trainer and canaries, the memberships fixed before any run, the seed."""

    game: DPSGDGame
    members: np.ndarray
    seed: int
    store: RunStore | None
    execution: Execution

    @classmethod
    def draw(cls, game: DPSGDGame, max_runs: int, rng: np.random.Generator, seed: int, store: RunStore | None,
             execution: Execution) -> RunBatches:
        """Return the batches of a game of at most `max_runs` runs, their memberships drawn from `rng` now."""
        return cls(game, multi_run_membership(max_runs, rng, game.canaries.size), seed, store, execution)

    def play(self, start: int, count: int) -> Observations | tuple[Observations, ...]:
        """Return the scores and truth of runs start … start + count − 1: one `Observations`, or one per canary of a ladder."""
        k = self.game.canaries.size
        indices = range(start, start + count)
        saved = self.store.finished() if self.store else {}
        scores = {i: saved[i]["score"] for i in indices if i in saved}

        def finish(index: int, value: np.ndarray) -> None:
            scores[index] = float(value[0]) if k == 1 else [float(v) for v in value]
            if self.store:
                member = bool(self.members[index]) if k == 1 else [bool(b) for b in self.members[index]]
                self.store.append({"run": index, "member": member, "score": scores[index]})

        pending = [i for i in indices if i not in scores]
        size = min(group_size(self.game), max(1, math.ceil(len(pending) / MIN_GROUPS)))
        run_groups(lambda group: play_multi_run_group(self.game, group, self.members, self.seed, (RUN_STREAM,)),
                   pending, size=size, backend=self.execution.backend, finish=finish, worker_setup=one_torch_thread)
        table = np.array([scores[i] for i in indices], dtype=float).reshape(count, k)
        truth = self.members[start:start + count].reshape(count, k)
        arms = tuple(Observations(table[:, j], truth[:, j]) for j in range(k))
        return arms[0] if k == 1 else arms
