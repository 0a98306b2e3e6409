"""The certificate's test, aimed where a replay showed the move: a fixed post-processing of the release.

From one `Replay` (computed on draws of its own), `aimed` returns the
mechanism whose release is a fixed function of the original's: the entries
that moved (a sensitivity; at most 16, the largest moves), the release's form (a data-derived
shape: its kind, its number of entries, whether its labels are those of the
release on D), or the whole release's numbers (a divergence alone). A bound
certified on the aimed mechanism holds for the mechanism itself, since
post-processing cannot raise ε; and since the function was fixed before the
certificate's draws, which are fresh, choosing it costs nothing against β.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
from dpaudit.attacks.replay.releases import numbers, signature
from dpaudit.attacks.replay.replay_pair import Replay
from dpaudit.mechanisms.base import Mechanism

__all__ = ["Aim", "aim_of", "aimed"]

_KINDS = {"numbers": 0.0, "text": 1.0, "dict": 2.0}


def _releases(raw: Any, size: int) -> list[Any]:
    """Return a sampler's batch as a list of `size` releases."""
    return [raw[i] for i in range(size)]


def _form(labels_on_d0: tuple[str, ...]) -> Callable[[Any], np.ndarray]:
    """Return the map of a release to (its kind, its number of entries, 1 when its labels are those on D)."""
    def form(release: Any) -> np.ndarray:
        kind, shape, labels = signature(release)
        return np.array([_KINDS[kind], float(np.prod(shape)), float(labels == labels_on_d0)])

    return form


def _entries(kept: tuple[int, ...]) -> Callable[[Any], np.ndarray]:
    """Return the map of a release to its entries `kept` (NaN for those it lacks)."""
    def entries(release: Any) -> np.ndarray:
        values = numbers(release)
        return np.array([values[i] if i < values.size else np.nan for i in kept])

    return entries


@dataclasses.dataclass(frozen=True)
class Aim:
    """Where the certificate's test looks: `words` for the report, and the map of a release (None: the whole release).

    `entries` are the entries read, when the map reads entries (numeric batches are then read without a loop).
    """

    words: str
    read: Callable[[Any], np.ndarray] | None
    entries: tuple[int, ...] = ()


def aim_of(replay: Replay) -> Aim:
    """Return the aim of the certificate's test for one replay: its form, the entry that moved most, or the whole release."""
    shape, moved = replay.shape(), replay.sensitivity()
    if shape is not None:
        return Aim("the release's form (kind, entries, labels of the run on D)", _form(signature(replay.release0)[2]))
    size = numbers(replay.release0).size
    if moved is not None and moved.moved and len(moved.moved) < size:
        kept = tuple(sorted(moved.moved))
        return Aim(f"entr{'y' if len(kept) == 1 else 'ies'} {', '.join(map(str, kept))} of the release", _entries(kept), kept)
    return Aim("the whole release", None)


def aimed(mech: Mechanism, replay: Replay) -> tuple[Mechanism, Aim]:
    """Return the mechanism whose release is the aimed map of `mech`'s (itself when the aim is the whole release), and the aim."""
    aim = aim_of(replay)
    read, sampler = aim.read, mech.sampler
    if read is None:
        return mech, aim

    def sample(data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        raw = sampler(data, size, rng)
        if aim.entries and isinstance(raw, np.ndarray) and raw.dtype.kind in "biuf":
            flat = raw.reshape(size, -1).astype(float)
            if max(aim.entries) < flat.shape[1]:
                return flat[:, list(aim.entries)]
        return np.stack([read(r) for r in _releases(raw, size)])

    return dataclasses.replace(mech, name=f"{mech.name} [{aim.words}]", sampler=sample, event=mech.declared_event()), aim
