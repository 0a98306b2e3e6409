"""Run an audit's trials in chunks with deterministic seeding.

One `numpy.random.SeedSequence(seed)` is spawned into one child per chunk
(child 0 is the selection phase), so chunk i draws the same stream whatever
executes it; each chunk is reduced to a few counts before it returns, so
memory stays flat as trials grow.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np

from attacks.distinguish import DistinguishingTest
from mechanisms.base import Mechanism
from mechanisms.errors import MechanismError

CHUNK_ELEMENTS = 250_000


def chunk_sizes(total: int, per_chunk: int) -> list[int]:
    """Return the sizes of consecutive chunks of at most `per_chunk` covering `total`."""
    full, rest = divmod(total, per_chunk)
    return [per_chunk] * full + ([rest] if rest else [])


def per_chunk(output_elements: int) -> int:
    """Return how many outputs per dataset one chunk draws, given the elements in one output."""
    return max(1000, CHUNK_ELEMENTS // max(1, output_elements))


def seeds(seed: int, n_chunks: int) -> list[np.random.SeedSequence]:
    """Return the child seed sequences: index 0 for selection, i + 1 for estimation chunk i."""
    return np.random.SeedSequence(seed).spawn(n_chunks + 1)


def draw(mech: Mechanism, d0: Any, d1: Any, size: int, seed: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    """Return `size` outputs on d0 then `size` on d1, from one generator seeded by `seed`."""
    rng = np.random.default_rng(seed)
    return mech.sample(d0, size, rng), mech.sample(d1, size, rng)


@dataclasses.dataclass(frozen=True)
class CountRejections:
    """A chunk's work: draw outputs on d0 and d1 and count where `test` guesses D1.

    Returns [rejections among d0 outputs, rejections among d1 outputs].
    """

    mechanism: Mechanism
    d0: Any
    d1: Any
    test: DistinguishingTest

    def __call__(self, size: int, seed: np.random.SeedSequence) -> np.ndarray:
        out0, out1 = draw(self.mechanism, self.d0, self.d1, size, seed)
        return np.array([np.count_nonzero(self.test.rejects(out0)), np.count_nonzero(self.test.rejects(out1))])


def run_inline(
    task: Callable[[int, np.random.SeedSequence], np.ndarray],
    sizes: Sequence[int],
    chunk_seeds: Sequence[np.random.SeedSequence],
    *,
    name: str,
    seed: int,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Run every chunk in this process; return the sum of their count vectors."""
    total = None
    for i, (size, child) in enumerate(zip(sizes, chunk_seeds)):
        try:
            counts = task(size, child)
        except MechanismError as exc:
            raise MechanismError(f"{str(exc).rstrip('.')} (estimation chunk {i}, seed {seed}).") from exc
        total = counts if total is None else total + counts
        if progress:
            progress(size)
    return total
