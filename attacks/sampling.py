"""Drawing a mechanism's outputs on a neighbouring pair: in chunks of bounded memory, from given seeds.

Chunk sizes depend only on the number of trials and the size of one
output, never on where the chunks run, so a chunk's outputs are a pure
function of its seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.outputs import check_shape

__all__ = ["CHUNK_ELEMENTS", "chunk_sizes", "draw", "draw_checked", "draw_poissonized", "per_chunk"]

CHUNK_ELEMENTS = 250_000


def chunk_sizes(total: int, per_chunk: int) -> list[int]:
    """Return the sizes of consecutive chunks of at most `per_chunk` covering `total`."""
    full, rest = divmod(total, per_chunk)
    return [per_chunk] * full + ([rest] if rest else [])


def per_chunk(output_elements: int) -> int:
    """Return how many outputs per dataset one chunk draws, given the elements in one output."""
    return max(16, CHUNK_ELEMENTS // max(1, output_elements))


def draw(mech: Mechanism, d0: Any, d1: Any, size: int, seed: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    """Return `size` outputs on d0 then `size` on d1, from one generator seeded by `seed`."""
    rng = np.random.default_rng(seed)
    return mech.sample(d0, size, rng), mech.sample(d1, size, rng)


def draw_poissonized(
    mech: Mechanism, d0: Any, d1: Any, size: int, seed: np.random.SeedSequence
) -> tuple[np.ndarray, np.ndarray]:
    """Return Poisson(`size`) outputs on d0 then, independently, Poisson(`size`) on d1, from one generator.

    Independent Poisson trial counts make the counts of any fixed event
    independent Poisson variables, as `dpaudit.audit.estimators.rate_ratio` needs.
    """
    rng = np.random.default_rng(seed)
    n0, n1 = rng.poisson(size, 2)
    return tuple(mech.sample(d, int(n), rng) if n else np.empty(0) for d, n in ((d0, n0), (d1, n1)))


def draw_checked(
    mech: Mechanism, d0: Any, d1: Any, size: int, seed: np.random.SeedSequence, shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Return a chunk's Poissonized outputs on d0 and d1; outputs of another `shape` stop the audit (`MechanismError`)."""
    out0, out1 = draw_poissonized(mech, d0, d1, size, seed)
    for out, name in ((out0, "on d0"), (out1, "on d1")):
        if len(out):
            check_shape(mech.name, out, shape, name)
    return out0, out1
