"""Detect a mechanism drawing from a global generator (numpy's legacy `np.random.*`, Python's `random`).

Such draws ignore the audit's seed, so the same seed no longer gives the
same result. The bound stays sound (its randomness is still fresh), but the
user should know, and draw from the `rng` the mechanism is given instead.
Only the phase that always runs in process (pair, probe, screening,
selection) is watched: chunks may run elsewhere, and Dask itself draws
from Python's generator.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

__all__ = ["GLOBAL_STREAMS_WARNING", "global_streams", "streams_warning"]

GLOBAL_STREAMS_WARNING = (
    "the mechanism draws from a global random generator (np.random.* or random.*), which the seed does not fix, "
    "so this audit is not reproducible; draw from the rng argument it is given"
)


def global_streams() -> tuple[Any, ...]:
    """Return the positions of numpy's and Python's global generators, to compare before and after the selection phase."""
    _, keys, pos, has_gauss, cached = np.random.get_state()
    return keys.tobytes(), pos, has_gauss, cached, random.getstate()


def streams_warning(before: tuple[Any, ...]) -> str | None:
    """Return GLOBAL_STREAMS_WARNING if a global generator moved since `before` (`global_streams()`), else None."""
    return None if global_streams() == before else GLOBAL_STREAMS_WARNING
