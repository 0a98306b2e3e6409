"""Canaries and the multi-run membership game.

A canary is a record the auditor may insert into a mechanism's dataset. The
membership game runs the mechanism R times; in each run the canary is in
with probability 1/2, and a scorer turns the run's output into one score
(higher = "member"). The game returns `Observations` (scores and the
membership truth); it never computes ε — an estimator does (Jagielski,
Ullman, Oprea, NeurIPS 2020; Nasr et al., USENIX Security 2023). Runs are
independent, so IN and OUT scores are independent draws from the outputs on
the two neighbouring datasets, which is what the threshold and GDP
estimators assume.

Canaries are built here: random ±norm/√d vectors (nearly orthogonal in high
dimension d), one category per canary, or the differing record of a
mechanism's own neighbouring pair.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from dpaudit.attacks.observations import Observations
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.errors import InvalidParameterError
from dpaudit.mechanisms.validation import check_int, check_real

if TYPE_CHECKING:
    from dpaudit.attacks.canary_scores import CanaryScorer

__all__ = ["CanarySet", "category_canaries", "fresh_canary_game", "membership_game", "pair_canary", "sparse_canaries", "vector_canaries"]

VECTOR, CATEGORY, RECORD = "vector", "category", "record"
FIRST_CHUNK = 100
CHUNK_ELEMENTS = 1_000_000


@dataclasses.dataclass(frozen=True, eq=False)
class CanarySet:
    """m canary records and how they enter a dataset.

    `kind` is VECTOR (float vectors, scored by their direction), CATEGORY
    (integer categories) or RECORD (any record, from a neighbouring pair).
    `absent` is None under add/remove (an OUT canary is left out) or, under
    replace-one, the m records that fill an OUT canary's slot. `base` holds
    the records present in every run; the canaries' slots go in at `position`.
    """

    kind: str
    records: np.ndarray
    base: np.ndarray
    absent: np.ndarray | None = None
    position: int = 0

    @property
    def size(self) -> int:
        """Return m, the number of canaries."""
        return len(self.records)

    def dataset(self, included: Any) -> np.ndarray:
        """Return the dataset with canary i in when included[i] (its `absent` record, or nothing, when out)."""
        mask = np.asarray(included, dtype=bool).reshape(-1)
        if self.absent is None:
            slots = self.records[mask]
        else:
            shape = (-1,) + (1,) * (self.records.ndim - 1)
            slots = np.where(mask.reshape(shape), self.records, self.absent)
        return np.concatenate([self.base[: self.position], slots, self.base[self.position:]])


def vector_canaries(
    m: int, *, dim: int, norm: float = 1.0, rng: np.random.Generator, replace: bool = False
) -> CanarySet:
    """Return m random canaries with entries ±norm/√dim (ℓ2 norm `norm`), nearly orthogonal for large dim.

    `replace` (replace-one relation): an OUT canary's slot holds its negation,
    so IN and OUT differ by one record, as far apart as the norm allows.
    No base records (set `base` with dataclasses.replace).
    """
    m = check_int(m, "canaries", "vector_canaries")
    dim = check_int(dim, "dim", "vector_canaries")
    norm = check_real(norm, "norm", "vector_canaries", low=0.0, low_open=True)
    records = rng.choice(np.array([-1.0, 1.0]), size=(m, dim)) * (norm / math.sqrt(dim))
    return CanarySet(VECTOR, records, np.zeros((0, dim)), -records if replace else None)


def sparse_canaries(
    m: int, *, dim: int, norm: float = 1.0, rng: np.random.Generator, replace: bool = False
) -> CanarySet:
    """Return m canaries ±norm·e_i on distinct coordinates of dimension max(dim, m): exactly orthogonal.

    The worst-case canaries for ℓ1-clipped sums (Laplace noise), where a
    dense unit vector would be shrunk by the ℓ1 clipping; `replace` as in
    `vector_canaries`.
    """
    m = check_int(m, "canaries", "sparse_canaries")
    dim = max(check_int(dim, "dim", "sparse_canaries"), m)
    norm = check_real(norm, "norm", "sparse_canaries", low=0.0, low_open=True)
    records = np.zeros((m, dim))
    records[np.arange(m), rng.permutation(dim)[:m]] = rng.choice(np.array([-norm, norm]), size=m)
    return CanarySet(VECTOR, records, np.zeros((0, dim)), -records if replace else None)


def category_canaries(m: int, *, bins: int, replace: bool = False) -> CanarySet:
    """Return m canaries, canary i being category i; under `replace` OUT slots hold category m.

    Needs bins ≥ m (add/remove) or bins ≥ m + 1 (replace-one, one spare category).
    """
    m = check_int(m, "canaries", "category_canaries")
    needed = m + 1 if replace else m
    if bins < needed:
        raise InvalidParameterError(
            f"{m} category canaries need a mechanism with at least {needed} bins; it has {bins} "
            f"(pass --param bins={needed})."
        )
    absent = np.full(m, m) if replace else None
    return CanarySet(CATEGORY, np.arange(m), np.zeros(0, dtype=int), absent)


def pair_canary(d0: np.ndarray, d1: np.ndarray) -> CanarySet:
    """Return the canary of a neighbouring pair: d1's differing record, d0's in its slot when out."""
    a = np.asarray(d0).reshape(len(d0), -1)
    b = np.asarray(d1).reshape(len(d1), -1)
    changed = np.flatnonzero(np.any(a != b, axis=1))
    if changed.size != 1:
        raise InvalidParameterError(
            f"A pair canary needs datasets differing in exactly one record; they differ in {changed.size}."
        )
    row = int(changed[0])
    return CanarySet(RECORD, d1[row:row + 1], np.delete(d0, row, axis=0), d0[row:row + 1], row)


def _scores_on(mech: Mechanism, data: np.ndarray, count: int, canary: CanarySet,
               scorer: CanaryScorer, rng: np.random.Generator) -> np.ndarray:
    """Return the first canary's scores in `count` outputs on `data`, drawn in chunks of bounded size."""
    scores, done, chunk = [], 0, FIRST_CHUNK
    while done < count:
        size = min(chunk, count - done)
        outputs = mech.sample(data, size, rng)
        scores.append(scorer.score(outputs, canary)[:, 0])
        done += size
        per_output = max(1, outputs[0].size)
        chunk = max(FIRST_CHUNK, CHUNK_ELEMENTS // per_output)
    return np.concatenate(scores) if scores else np.zeros(0)


def membership_game(
    mech: Mechanism, canary: CanarySet, *, runs: int, scorer: CanaryScorer, rng: np.random.Generator
) -> Observations:
    """Return the Observations of R runs, each with `canary` in with probability 1/2.

    One canary, so only two datasets: the runs with it are drawn in one
    vectorized batch, the runs without it in another (in chunks of bounded
    memory). Sound input for the threshold and GDP estimators: the runs are
    independent (Jagielski, Ullman, Oprea, NeurIPS 2020).
    """
    runs = check_int(runs, "runs", "membership_game", low=2)
    if canary.size != 1:
        raise InvalidParameterError(f"membership_game takes one canary; got {canary.size}.")
    truth = rng.random(runs) < 0.5
    scores = np.empty(runs)
    for member in (True, False):
        where = truth == member
        data = canary.dataset([member])
        scores[where] = _scores_on(mech, data, int(where.sum()), canary, scorer, rng)
    return Observations(scores=scores, truth=truth)


def fresh_canary_game(
    mech: Mechanism, make_canary: Callable[[np.random.Generator], CanarySet], *, runs: int,
    scorer: CanaryScorer, rng: np.random.Generator,
) -> Observations:
    """Return the Observations of R runs, each with a fresh canary `make_canary(rng)` in with probability 1/2.

    Every run has its own dataset, so the mechanism is called once per run (a
    loop over runs: a black box cannot batch different datasets). Runs are
    independent and identically distributed, so the estimators' assumptions
    hold; the bound is about the canary distribution's average, which DP
    bounds canary by canary.
    """
    runs = check_int(runs, "runs", "fresh_canary_game", low=2)
    truth = rng.random(runs) < 0.5
    scores = np.empty(runs)
    for run in range(runs):
        canary = make_canary(rng)
        output = mech.sample(canary.dataset([truth[run]]), 1, rng)
        scores[run] = scorer.score(output, canary)[0, 0]
    return Observations(scores=scores, truth=truth)
