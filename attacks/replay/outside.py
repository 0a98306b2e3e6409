"""Randomness drawn outside the recorded source: found, and named in one sentence as not replayable.

A replay sees only the draws made through the generator dpaudit hands the
mechanism. `watching()` notes the other sources a run used: numpy's global
state (`np.random.*`, compared before and after), Python's `random`
(compared likewise), the operating system's entropy (`os.urandom`, and
through it `secrets`, `random.SystemRandom`, `uuid.uuid4` and an unseeded
`np.random.default_rng()`: counted by patching the two names they call for
the run's duration), and torch's default generator when torch is loaded.
A draw from a generator the mechanism seeds itself with a constant is not
random and is not seen. A sampler that draws where no watch reaches (a
library's noise drawn in Rust or C from the system's entropy) says so in
its `not_replayable` attribute, and `declared_unreplayable` refuses it.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
from typing import Any, Callable, Iterator

import numpy as np
from dpaudit.errors import InvalidParameterError

__all__ = ["NotReplayable", "declared_unreplayable", "not_replayable", "watching"]


class NotReplayable(InvalidParameterError):
    """A mechanism draws from a source a replay does not record: its draws cannot be replayed (one sentence)."""


def _torch_state() -> Any:
    torch = sys.modules.get("torch")
    return None if torch is None else torch.random.get_rng_state()


def _same_numpy(a: Any, b: Any) -> bool:
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]


def _same_torch(a: Any, b: Any) -> bool:
    return (a is None) == (b is None) and (a is None or bool((a == b).all()))


def _counting(real: Callable[[int], bytes], uses: list[str]) -> Callable[[int], bytes]:
    def urandom(n: int) -> bytes:
        uses.append("the operating system's entropy (os.urandom, secrets, an unseeded default_rng)")
        return real(n)

    return urandom


@contextlib.contextmanager
def watching() -> Iterator[list[str]]:
    """Yield a list that, when the block ends, names each outside source of randomness the block drew from."""
    found: list[str] = []
    before = (np.random.get_state(), random.getstate(), _torch_state())
    urandoms = (os.urandom, random._urandom)  # type: ignore[attr-defined]
    os.urandom = _counting(urandoms[0], found)
    random._urandom = _counting(urandoms[1], found)  # type: ignore[attr-defined]
    try:
        yield found
    finally:
        os.urandom, random._urandom = urandoms  # type: ignore[attr-defined]
        found[:] = sorted(set(found))
        if not _same_numpy(before[0], np.random.get_state()):
            found.append("numpy's global random state (np.random.*)")
        if before[1] != random.getstate():
            found.append("Python's random module")
        if not _same_torch(before[2], _torch_state()):
            found.append("torch's default generator")


def not_replayable(name: str, sources: list[str]) -> NotReplayable:
    """Return the error naming the mechanism and the sources its draws came from, in one sentence."""
    return NotReplayable(
        f"Mechanism '{name}' draws from {' and '.join(dict.fromkeys(sources))}, which a replay does not record: its noise "
        "cannot be replayed on a neighbour; draw every random number from the rng it is given, or audit it with audit_mechanism."
    )


def declared_unreplayable(name: str, sampler: Any) -> None:
    """Raise `NotReplayable` in one sentence when the sampler declares (`not_replayable`) why its draws cannot be replayed."""
    why = getattr(sampler, "not_replayable", None)
    if why:
        raise NotReplayable(f"Mechanism '{name}' cannot be replayed: {why}; audit it with audit_mechanism "
                            "(dpaudit audit), which needs no replay.")
