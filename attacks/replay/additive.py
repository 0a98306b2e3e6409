"""A replay's check that the release moves one for one with the noise laid under it, before that noise prices its move.

`noise_shift.release_shifts` reads a move of the release as the move of the
value the noise is added to, which holds when the release is that value
plus the recorded draws' outputs (`value + rng.laplace(0, b)`). It does not
for `(value + rng.laplace(0, b)) / n` or `value + 3 * rng.laplace(0, 1)`:
the released noise has another scale there, and its price would be
another. `moves_with_its_noise` tests it with one run more on D′: the
draws laid under the release are answered with their recorded outputs
plus their scale, and the release must move by exactly that, entry by
entry (to a relative 10⁻⁶); else the move is "not priced".
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from dpaudit.attacks.replay.draws import Draw
from dpaudit.attacks.replay.generators import Replaying
from dpaudit.attacks.replay.noise_shift import additive_draws, scale_of
from dpaudit.attacks.replay.releases import numbers

__all__ = ["moves_with_its_noise"]


def moves_with_its_noise(run: Callable[[Replaying], Any], release1: Any, tape: list[Draw],
                         seed: np.random.SeedSequence) -> bool:
    """Return True when `run` (the mechanism on D′) moves its release by t when the noise laid under it moves by t.

    t is each additive draw's scale, entry by entry, laid over the release's
    entries in the order the draws were made (they must add up to the
    release's entries, as `release_shifts` lays them). Sound as a check of
    the reading only: a release that is its value plus that noise passes,
    and one whose noise is scaled, divided or transformed fails, unless it
    is so only away from the shift (a reading, never a certificate).
    """
    laid = additive_draws(tape)
    shifts = [np.broadcast_to(scale_of(d), d.shape).astype(float) for _, d in laid]
    base = numbers(release1)
    if not laid or sum(s.size for s in shifts) != base.size or not all(np.all(np.isfinite(s)) for s in shifts):
        return False
    moved = list(tape)
    for (i, d), t in zip(laid, shifts):
        moved[i] = Draw(d.method, d.arguments, np.add(d.noise, t), np.add(d.output, t)[()])
    replaying = Replaying(moved, np.random.PCG64(seed))
    try:
        probe = numbers(run(replaying))
    except Exception:  # noqa: BLE001 - a release that fails on moved noise is not one that moves with it
        return False
    replaying.finish()
    expected = np.concatenate([t.ravel() for t in shifts])
    return (not replaying.divergences and probe.shape == base.shape
            and bool(np.allclose(probe - base, expected, rtol=1e-6, atol=0.0)))
