"""The training runs of a DP-SGD game: many runs (each saved as it ends, resumable, spread over workers) or one run."""

from __future__ import annotations

import math

import numpy as np
from dpaudit.attacks.dpsgd.game import (
    RUN_STREAM,
    DPSGDGame,
    group_size,
    multi_run_membership,
    one_torch_thread,
    play_multi_run_group,
    play_one_run,
)
from dpaudit.attacks.observations import Observations
from dpaudit.execution.execution import Execution
from dpaudit.execution.interrupted import Interrupted
from dpaudit.execution.progress import progress_of
from dpaudit.execution.run_store import RunStore
from dpaudit.execution.runs import run_groups

__all__ = ["MIN_GROUPS", "multi_run", "one_run"]

MIN_GROUPS = 8  # runs trained side by side are split in at least this many groups: saved as they go, spread over workers


def one_run(game: DPSGDGame, m: int, rng: np.random.Generator, seed: int, store: RunStore | None) -> Observations:
    """Return the scores of the one run of a one-run game, each of the m canaries in with probability ½ (drawn from `rng`)."""
    included = rng.random(m) < 0.5
    done = store.finished() if store else {}
    scores = done[0]["scores"] if 0 in done else play_one_run(game, included, seed)
    if store and 0 not in done:
        store.append({"run": 0, "scores": scores})
    return Observations(np.asarray(scores, dtype=float), included)


def multi_run(game: DPSGDGame, runs: int, rng: np.random.Generator, seed: int, store: RunStore | None,
              execution: Execution, *, stream: tuple[int, ...] = (RUN_STREAM,),
              label: str = "training runs") -> Observations | tuple[Observations, ...]:
    """Return the runs' scores and truth: one `Observations`, or one per canary of a ladder.

    Membership is drawn from `rng` before any run; run i trains from child
    (*stream, i) of the seed, so its scores depend on nothing else.
    """
    k = game.canaries.size
    members = multi_run_membership(runs, rng, k)
    scores = {i: record["score"] for i, record in (store.finished() if store else {}).items() if i < runs}
    pending = [i for i in range(runs) if i not in scores]

    def finish(index: int, value: np.ndarray) -> None:
        scores[index] = float(value[0]) if k == 1 else [float(v) for v in value]
        if store:
            member = bool(members[index]) if k == 1 else [bool(b) for b in members[index]]
            store.append({"run": index, "member": member, "score": scores[index]})

    with progress_of(execution.progress, runs, label=label) as bar:
        if bar and scores:
            bar(len(scores))
        try:
            run_groups(lambda group: play_multi_run_group(game, group, members, seed, stream), pending,
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
