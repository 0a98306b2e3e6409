"""Run an audit's trials in chunks with deterministic seeding, in process (Dask: `backends`).

One `numpy.random.SeedSequence(seed)` is spawned into one child per chunk
(child 0 is the selection phase), so chunk i draws the same stream whatever
executes it; chunk sizes depend only on the number of trials and the size of
one output, never on the backend; each chunk is reduced to a few integer
counts before it returns, and integer sums do not depend on the order in
which chunks finish. So the result is bit-for-bit the same inline, on a local
Dask cluster of any size and on an existing Dask cluster, and memory stays
flat as trials grow (Scientific Python SPEC 7, "Seeding pseudo-random number
generation"; numpy `SeedSequence.spawn`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np
from dpaudit.attacks.distinguish import DistinguishingTest
from dpaudit.attacks.output_histogram import cell_counts
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms.outputs import check_shape
from dpaudit.mechanisms.validation import check_int

__all__ = [
    "AuditInterrupted",
    "Backend",
    "CountCells",
    "CountRejections",
    "Progress",
    "Task",
    "chunk_sizes",
    "draw",
    "per_chunk",
    "run_batch",
    "run_inline",
    "seeds",
]

CHUNK_ELEMENTS = 250_000

Task = Callable[[int, np.random.SeedSequence], np.ndarray]
Progress = Callable[[int], None]


def chunk_sizes(total: int, per_chunk: int) -> list[int]:
    """Return the sizes of consecutive chunks of at most `per_chunk` covering `total`."""
    full, rest = divmod(total, per_chunk)
    return [per_chunk] * full + ([rest] if rest else [])


def per_chunk(output_elements: int) -> int:
    """Return how many outputs per dataset one chunk draws, given the elements in one output."""
    return max(16, CHUNK_ELEMENTS // max(1, output_elements))


def seeds(seed: int, n_chunks: int) -> list[np.random.SeedSequence]:
    """Return the child seed sequences: index 0 for selection, i + 1 for estimation chunk i."""
    return np.random.SeedSequence(seed).spawn(n_chunks + 1)


def draw(mech: Mechanism, d0: Any, d1: Any, size: int, seed: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    """Return `size` outputs on d0 then `size` on d1, from one generator seeded by `seed`."""
    rng = np.random.default_rng(seed)
    return mech.sample(d0, size, rng), mech.sample(d1, size, rng)


def _draw_poissonized(
    mech: Mechanism, d0: Any, d1: Any, size: int, seed: np.random.SeedSequence
) -> tuple[np.ndarray, np.ndarray]:
    """Return Poisson(`size`) outputs on d0 then, independently, Poisson(`size`) on d1, from one generator.

    Independent Poisson trial counts make the counts of any fixed event
    independent Poisson variables, as `dpaudit.audit.estimators.rate_ratio` needs.
    """
    rng = np.random.default_rng(seed)
    n0, n1 = rng.poisson(size, 2)
    return tuple(mech.sample(d, int(n), rng) if n else np.empty(0) for d, n in ((d0, n0), (d1, n1)))


def _draw_checked(
    mech: Mechanism, d0: Any, d1: Any, size: int, seed: np.random.SeedSequence, shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Return a chunk's Poissonized outputs on d0 and d1; outputs of another `shape` stop the audit (`MechanismError`)."""
    out0, out1 = _draw_poissonized(mech, d0, d1, size, seed)
    for out, name in ((out0, "on d0"), (out1, "on d1")):
        if len(out):
            check_shape(mech.name, out, shape, name)
    return out0, out1


@dataclasses.dataclass(frozen=True)
class CountRejections:
    """A chunk's work: draw Poisson(size) outputs on each of d0 and d1 and count where `test` guesses D1.

    Outputs of another `shape` than the selection's stop the audit (`MechanismError`).

    Returns [rejections among d0 outputs, rejections among d1 outputs,
    outputs drawn on d0, outputs drawn on d1].
    """

    mechanism: Mechanism
    d0: Any
    d1: Any
    test: DistinguishingTest
    shape: tuple[int, ...]

    def __call__(self, size: int, seed: np.random.SeedSequence) -> np.ndarray:
        out0, out1 = _draw_checked(self.mechanism, self.d0, self.d1, size, seed, self.shape)
        rejected = [np.count_nonzero(self.test.rejects(out)) if len(out) else 0 for out in (out0, out1)]
        return np.array([*rejected, len(out0), len(out1)], dtype=np.int64)


@dataclasses.dataclass(frozen=True)
class CountCells:
    """A chunk's work for scalar outputs: draw Poisson(size) outputs on each of d0 and d1 and count them in `grid`'s cells.

    Returns [cell counts of d0 outputs, cell counts of d1 outputs]
    (`dpaudit.attacks.output_histogram.cell_counts`, 2G + 1 each).
    """

    mechanism: Mechanism
    d0: Any
    d1: Any
    grid: np.ndarray
    shape: tuple[int, ...]

    def __call__(self, size: int, seed: np.random.SeedSequence) -> np.ndarray:
        out0, out1 = _draw_checked(self.mechanism, self.d0, self.d1, size, seed, self.shape)
        return np.concatenate([cell_counts(self.grid, out0), cell_counts(self.grid, out1)]).astype(np.int64)


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


class AuditInterrupted(KeyboardInterrupt):
    """Ctrl-C during the held-out phase, carrying the counts of the `trials` per dataset that finished.

    Those chunks are independent fresh samples and where to stop did not
    depend on their counts, so a bound from them alone is still sound;
    `audit_mechanism` raises it again with that bound as `result` (None
    when nothing finished).
    """

    def __init__(self, counts: np.ndarray, trials: int, result: Any = None) -> None:
        super().__init__()
        self.counts, self.trials, self.result = counts, trials, result


@dataclasses.dataclass(frozen=True)
class Backend:
    """Where chunks run: in this process (default), on `workers` local Dask processes, or at `scheduler`.

    `workers` starts a `distributed.LocalCluster` of that many single-threaded
    worker processes for the audit; `scheduler` is the address of a running
    Dask scheduler (e.g. "tcp://10.0.0.5:8786"). Both need `dpaudit[dask]`,
    and a script passing `workers` needs the `if __name__ == "__main__":`
    guard, since worker processes are spawned and import the main module.
    """

    workers: int | None = None
    scheduler: str | None = None

    def __post_init__(self) -> None:
        if self.workers is not None:
            object.__setattr__(self, "workers", check_int(self.workers, "workers", "audit_mechanism", low=1))
        if self.scheduler is not None and not (isinstance(self.scheduler, str) and self.scheduler.strip()):
            raise InvalidParameterError(
                f"The 'scheduler' parameter of audit_mechanism must be a Dask scheduler address; got {self.scheduler!r} instead."
            )
        if self.workers is not None and self.scheduler is not None:
            raise InvalidParameterError("Pass either 'workers' (a local cluster) or 'scheduler' (an existing one), not both.")

    @property
    def inline(self) -> bool:
        """Return True when chunks run in this process."""
        return self.workers is None and self.scheduler is None


def run_inline(
    task: Task,
    sizes: Sequence[int],
    chunk_seeds: Sequence[np.random.SeedSequence],
    *,
    seed: int,
    progress: Progress | None = None,
) -> np.ndarray:
    """Run every chunk in this process; return the sum of their count vectors."""
    total, done = np.int64(0), 0
    try:
        for i, (size, child) in enumerate(zip(sizes, chunk_seeds)):
            total = total + _run_chunk(task, i, size, child, seed)
            done += size
            if progress:
                progress(size)
    except KeyboardInterrupt:
        raise AuditInterrupted(total, done) from None
    return total
