"""The neighbours a replay screens: the default pair, then the bug hunter's candidates, each replayed at two runs.

`candidates` returns the mechanism's default pair first, then the pairs of
`dpaudit.attacks.neighbour_candidates.candidate_pairs` (records at and beyond
bounds, NaN and ±inf, magnitudes, unseen categories, small datasets,
rounding), or, where that module is absent, simple ones built from the
default pair's records: each record seen, 0, and their negations and tenfold
multiples, inserted into (add-remove) or replacing the first record of
(replace-one) the smaller dataset, and each record of it removed. Every pair
passes `check_pair`, the audit's own check. Generating reads no output.
`screen` replays each at two runs (one on D, one on D′) from its own seed.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from typing import Any, Iterable

import numpy as np
from dpaudit.attacks.replay.replay_pair import Replay, replay_pair
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms.base import Mechanism, Relation, check_pair

__all__ = ["Candidate", "candidates", "screen"]


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A neighbouring pair to replay: its kind, the datasets, and what changes in words."""

    kind: str
    d0: Any
    d1: Any
    note: str


def _checked(mech: Mechanism, kind: str, d0: Any, d1: Any, note: str) -> Candidate | None:
    try:
        a, b = check_pair(mech, d0, d1)
    except InvalidParameterError:
        return None
    return Candidate(kind, a, b, note)


def _simple(mech: Mechanism, base: np.ndarray, seen: np.ndarray) -> list[Candidate]:
    """Return insertions, replacements and removals of simple records into `base` that are neighbours for `mech`."""
    values = [v for v in seen]
    if seen.dtype.kind in "biuf":
        values += [np.zeros_like(seen[0])] + [k * v for v in seen for k in (-1, 10, -10)]
    found = []
    for v in values:
        if mech.claim.relation is Relation.ADD_REMOVE:
            found.append(_checked(mech, "insert", base, np.concatenate([base, [v]]), f"insert {v!r:.40}"))
        elif len(base):
            other = base.copy() if base.dtype.kind != "U" else base.astype(object)
            other[0] = v
            found.append(_checked(mech, "replace", base, other, f"replace the first record by {v!r:.40}"))
    if mech.claim.relation is Relation.ADD_REMOVE:
        found += [_checked(mech, "remove", np.delete(base, i, axis=0), base, f"remove record {i}") for i in range(len(base))]
    return [c for c in found if c is not None]


def candidates(mech: Mechanism, *, rng: np.random.Generator, kinds: Iterable[str] | None = None) -> list[Candidate]:
    """Return the default pair (when there is one) and the generated neighbours for `mech`, each checked.

    Raises:
        InvalidParameterError: when there is neither a default pair nor a declared domain to build neighbours from.
    """
    found = [] if mech.default_pair is None else [_checked(mech, "default", *mech.default_pair, "the default pair")]
    if importlib.util.find_spec("dpaudit.attacks.neighbour_candidates") is not None:
        from dpaudit.attacks.neighbour_candidates import candidate_pairs

        found += [Candidate(c.kind, c.d0, c.d1, c.note) for c in candidate_pairs(mech, rng=rng, kinds=kinds)]
    elif mech.default_pair is not None:
        a, b = (np.asarray(d) for d in mech.default_pair)
        base = a if len(a) <= len(b) else b
        found += _simple(mech, base, np.unique(np.concatenate([a, b]), axis=0))
    else:
        raise InvalidParameterError(f"Mechanism '{mech.name}' has no default pair to build neighbours from; pass d0 and d1.")
    return [c for c in found if c is not None]


def screen(mech: Mechanism, pairs: list[Candidate], *, seed: np.random.SeedSequence) -> list[tuple[Candidate, Replay]]:
    """Return each pair with its replay, each recorded from its own child of `seed` (two runs per pair, and one more on
    the first: its D replayed on itself, so that noise from a source no watch names is refused, not read as the data's).

    A pair on whose d0 the mechanism raises cannot be replayed and is left out (unless it is the only one: then the
    `MechanismError` is raised).
    """
    replayed, failures = [], []
    for c, child in zip(pairs, seed.spawn(len(pairs))):
        try:
            replayed.append((c, replay_pair(mech, c.d0, c.d1, seed=child, itself=not replayed)))
        except MechanismError as exc:
            failures.append(exc)
    if not replayed and failures:
        raise failures[0]
    return replayed
