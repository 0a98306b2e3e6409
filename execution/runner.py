"""Run an audit's chunks in process with deterministic seeding (Dask: `backends`).

One `numpy.random.SeedSequence(seed)` is spawned into one child per chunk
(child 0 is the selection phase), so chunk i draws the same stream whatever
executes it; chunk sizes depend only on the number of trials and the size of
one output, never on the backend (`dpaudit.attacks.sampling`); each chunk is
reduced to a few integer counts before it returns (the attack's task), and
integer sums do not depend on the order in which chunks finish. So the
result is bit-for-bit the same inline, on a local Dask cluster of any size
and on an existing Dask cluster, and memory stays flat as trials grow
(Scientific Python SPEC 7, "Seeding pseudo-random number generation"; numpy
`SeedSequence.spawn`).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from dpaudit.errors import MechanismError
from dpaudit.execution.interrupted import Interrupted

__all__ = ["Progress", "Task", "run_batch", "run_inline", "seeds"]

Task = Callable[[int, np.random.SeedSequence], np.ndarray]
Progress = Callable[[int], None]


def seeds(seed: int, n_chunks: int) -> list[np.random.SeedSequence]:
    """Return the child seed sequences: index 0 for selection, i + 1 for estimation chunk i."""
    return np.random.SeedSequence(seed).spawn(n_chunks + 1)


def _run_chunk(task: Task, index: int, size: int, child: np.random.SeedSequence, seed: int) -> np.ndarray:
    """Return chunk `index`'s counts; a `MechanismError` is re-raised naming the chunk and the seed."""
    try:
        return task(size, child)
    except MechanismError as exc:
        raise MechanismError(f"{str(exc).rstrip('.')} (estimation chunk {index}, seed {seed}).") from exc


def run_batch(
    task: Task, first: int, sizes: Sequence[int], chunk_seeds: Sequence[np.random.SeedSequence], seed: int
) -> np.ndarray:
    """Return the summed counts of chunks `first`, `first` + 1, ... (several chunks in one remote call)."""
    return sum(_run_chunk(task, first + j, size, child, seed) for j, (size, child) in enumerate(zip(sizes, chunk_seeds)))


def run_inline(
    task: Task,
    sizes: Sequence[int],
    chunk_seeds: Sequence[np.random.SeedSequence],
    *,
    seed: int,
    progress: Progress | None = None,
) -> np.ndarray:
    """Run every chunk in this process; return the sum of their count vectors.

    Raises:
        Interrupted: on Ctrl-C, with the summed counts of the chunks that finished as `partial`
            and their trials per dataset as `done`.
    """
    total, done = np.int64(0), 0
    try:
        for i, (size, child) in enumerate(zip(sizes, chunk_seeds)):
            total = total + _run_chunk(task, i, size, child, seed)
            done += size
            if progress:
                progress(size)
    except KeyboardInterrupt:
        raise Interrupted(total, done=done, total=sum(sizes)) from None
    return total
