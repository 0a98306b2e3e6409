"""Replay one pair: run the mechanism once on D with a recording source, once on D′ with the recorded noise.

`replay_pair` returns a `Replay`: the two releases, the tape of draws, and
the findings (`Divergence`, `Sensitivity`, `DataDerivedShape`). It calls
the mechanism's sampler for one output on each dataset (a fresh copy of
each), inside `watching()`: a run that draws from a source the replay does
not record raises `NotReplayable`, naming it, since a replay of part of the
noise would read a move of the unrecorded noise as a move of the data. A
library adapter that replays in its own environment (`replays_elsewhere`)
is replayed there, at the library's one interception point, and its
record compared the same way. A move of the release is priced by the
law of the released noise a sampler declares (`declared_law`: a library's
uniforms made into Laplace noise; none for a release that is not the value
plus its draws), else, in process, by the draws recorded, laid under it,
once one run more on D′ shows the release moving one for one with them
(`moves_with_its_noise`); else (and always for a library replayed
elsewhere without a declared law) the move is not priced.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from dpaudit.attacks.replay.additive import moves_with_its_noise
from dpaudit.attacks.replay.draws import Draw
from dpaudit.attacks.replay.elsewhere import declared_law, recorded_elsewhere, replays_elsewhere
from dpaudit.attacks.replay.findings import DataDerivedShape, Divergence, Finding, Sensitivity
from dpaudit.attacks.replay.generators import Recording, Replaying
from dpaudit.attacks.replay.noise_shift import argument_shifts, priced, release_shifts
from dpaudit.attacks.replay.outside import declared_unreplayable, not_replayable, watching
from dpaudit.attacks.replay.releases import numbers, signature
from dpaudit.errors import MechanismError
from dpaudit.mechanisms.base import Mechanism, fresh_copy

__all__ = ["Replay", "replay_pair"]

MOVED = 16
"""A sensitivity names at most this many entries of the release that moved, largest move first."""


@dataclasses.dataclass(frozen=True)
class Replay:
    """One run on D and its replay on D′: the datasets, the releases, the draws recorded on D, and the findings.

    `runs` counts the mechanism's runs it took: two, and one more when the
    release's move was checked against the noise laid under it.
    """

    d0: Any
    d1: Any
    release0: Any
    release1: Any
    tape: tuple[Draw, ...]
    findings: tuple[Finding, ...]
    runs: int = 2

    def divergences(self) -> tuple[Divergence, ...]:
        """Return the divergences found."""
        return tuple(f for f in self.findings if isinstance(f, Divergence))

    def sensitivity(self) -> Sensitivity | None:
        """Return the sensitivity found, if the release or a noise argument moved."""
        return next((f for f in self.findings if isinstance(f, Sensitivity)), None)

    def shape(self) -> DataDerivedShape | None:
        """Return the data-derived shape found, if any."""
        return next((f for f in self.findings if isinstance(f, DataDerivedShape)), None)


def _one_release(mech: Mechanism, data: Any, rng: np.random.Generator) -> Any:
    """Return one release of the mechanism on `data` drawn from `rng` (the first of a batch of one)."""
    out = mech.sampler(fresh_copy(data), 1, rng)
    if isinstance(out, (list, tuple)) or (isinstance(out, np.ndarray) and out.ndim >= 1 and len(out) == 1):
        return out[0]
    return out


def replay_pair(mech: Mechanism, d0: Any, d1: Any, *, seed: np.random.SeedSequence, itself: bool = False) -> Replay:
    """Return the replay of `mech` on (d0, d1): recorded on d0 from `seed`, replayed on d1, compared.

    With `itself`, d0 is first replayed on d0 with its own draws (one run
    more): a release that comes back different drew from a source no watch
    names (a C or Rust library's generator, a clock), and is refused.

    Raises:
        MechanismError: when the mechanism raises on d0 (a raise on d1 is a finding: its release is a failure).
        NotReplayable: when a run draws from a source outside the generator it is handed, or its sampler says it cannot be
            replayed (`not_replayable`: a library whose noise is drawn in Rust or C).
    """
    declared_unreplayable(mech.name, mech.sampler)
    if replays_elsewhere(mech):
        there = recorded_elsewhere(mech, d0, d1, seed=seed)
        failure = there.failure if there.release1 is None else None
        laws = declared_law(mech, there.release0) or []  # no run more there checks the release moves with the noise
        return _replay(d0, d1, there.release0, there.release1, failure, there.tape, list(there.divergences), {}, laws)
    record_seed, fresh_seed, probe_seed = seed.spawn(3)
    recording = Recording(np.random.PCG64(record_seed))
    with watching() as outside0:
        try:
            release0 = _one_release(mech, d0, recording)
        except (Exception, SystemExit) as exc:
            raise MechanismError(f"Mechanism '{mech.name}' raised {type(exc).__name__} on D during a replay: {exc}") from exc
    if itself and not outside0 + recording.outside:  # a source a watch names is named (below) before this one
        _check_itself(mech, d0, release0, recording.tape, fresh_seed)
    replaying = Replaying(recording.tape, np.random.PCG64(fresh_seed))
    failure = None
    with watching() as outside1:
        try:
            release1 = _one_release(mech, d1, replaying)
        except (Exception, SystemExit) as exc:  # an adversary sees the failure: a release of its own
            release1, failure = None, f"{type(exc).__name__}: {exc}"[:120]
    sources = outside0 + outside1 + recording.outside + replaying.outside
    if sources:
        raise not_replayable(mech.name, sources)
    replaying.finish()
    laws = declared_law(mech, release0)
    found = _replay(d0, d1, release0, release1, failure, recording.tape, replaying.divergences, replaying.replayed, laws)
    laid = found.sensitivity() is not None and any(s.where == "release" for s in found.sensitivity().shifts)
    if laws is None and laid:
        if not moves_with_its_noise(lambda rng: _one_release(mech, d1, rng), release1, recording.tape, probe_seed):
            found = _replay(d0, d1, release0, release1, failure, recording.tape, replaying.divergences, replaying.replayed, [])
        found = dataclasses.replace(found, runs=3)
    return found


def _check_itself(mech: Mechanism, d0: Any, release0: Any, tape: list[Draw], seed: np.random.SeedSequence) -> None:
    """Raise `NotReplayable` when d0, replayed on itself with its own draws, does not give back its release."""
    again = Replaying(tape, np.random.PCG64(seed))
    try:
        release = _one_release(mech, d0, again)
    except (Exception, SystemExit) as exc:
        raise MechanismError(f"Mechanism '{mech.name}' raised {type(exc).__name__} on D during a replay: {exc}") from exc
    again.finish()
    same = signature(release) == signature(release0) and np.array_equal(numbers(release), numbers(release0), equal_nan=True)
    if again.divergences or not same:
        raise not_replayable(mech.name, ["a source besides the rng it is handed (replayed on D with its own draws, its "
                                         "release came out different)"])


def _replay(d0: Any, d1: Any, release0: Any, release1: Any, failure: str | None, tape: list[Draw],
            divergences: list[Divergence], replayed: dict[int, Draw], laws: list[Draw] | None = None) -> Replay:
    """Return the `Replay` of one pair: the divergences, then the failure on d1 or the releases compared."""
    findings: list[Finding] = list(divergences)
    if failure is not None:
        findings.append(DataDerivedShape("failure", "a release", f"a raise ({failure})"))
    else:
        findings += _compared(release0, release1, tape, replayed, tape if laws is None else laws)
    return Replay(d0, d1, release0, release1, tuple(tape), tuple(findings))


def _compared(release0: Any, release1: Any, tape: list[Draw], replayed: dict[int, Draw], laws: list[Draw]) -> list[Finding]:
    """Return the shape finding when the releases' forms differ, else the sensitivity when anything moved.

    A move of a noise argument is priced by its draw on the tape; a move of
    the release by the additive draws of `laws` (the tape in process, the
    declared law of a library's released noise), else it is not priced.
    """
    s0, s1 = signature(release0), signature(release1)
    if s0[:2] != s1[:2]:
        return [DataDerivedShape("shape", f"{s0[0]} of shape {s0[1]}", f"{s1[0]} of shape {s1[1]}")]
    if s0[2] != s1[2]:
        return [DataDerivedShape("categories", _shown(s0[2]), _shown(s1[2]))]
    move = _move(numbers(release0), numbers(release1))
    shifts, by = argument_shifts(tape, replayed), tape
    if not shifts:
        shifts, by = release_shifts(laws, move), laws
    if not shifts and not np.any(move != 0):
        return []
    pure, mu, unpriced = priced(shifts, by)
    if np.any(move != 0) and not tape:
        pure = math.inf  # a release that moves with no noise at all
    elif np.any(move != 0) and not shifts:
        unpriced = tuple(sorted({d.method for d in tape}))
    moved = tuple(int(i) for i in np.argsort(-move, kind="stable")[:MOVED] if move[i] != 0)
    return [Sensitivity(float(move.sum()), float(move.max(initial=0.0)), moved, tuple(s for s, _ in shifts),
                        pure, mu, unpriced)]


def _move(n0: np.ndarray, n1: np.ndarray) -> np.ndarray:
    """Return |n1 − n0| entry by entry: 0 where both are NaN or the same infinity, ∞ where only one is finite."""
    with np.errstate(invalid="ignore"):
        move = np.abs(n1 - n0)
    same = (np.isnan(n0) & np.isnan(n1)) | (n0 == n1)
    return np.where(same, 0.0, np.nan_to_num(move, nan=np.inf, posinf=np.inf))


def _shown(labels: tuple[str, ...]) -> str:
    """Return a set of labels in words (the first 6, and how many more)."""
    more = f", … ({len(labels) - 6} more)" if len(labels) > 6 else ""
    return "{" + ", ".join(labels[:6]) + more + "}"
