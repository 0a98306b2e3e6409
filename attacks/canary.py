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
dimension d), sparse ±norm·e_i vectors, corners of a box away from the
record that adds nothing, one category per canary (never the null record),
or the differing record of a mechanism's own neighbouring pair. A score's
direction is a guess: `both_directions` makes the scores two arms, members
higher and members lower, certified at β/2 each.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, Callable, Iterator, Union

import numpy as np
from dpaudit.attacks.observations import Observations
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Mechanism, not_neighbours
from dpaudit.mechanisms.datasets import records_of_pair
from dpaudit.mechanisms.neighbours import inserted_at, is_local
from dpaudit.mechanisms.records import BoxRecords
from dpaudit.validation import check_int, check_real

if TYPE_CHECKING:
    from dpaudit.attacks.canary_scores import CanaryScorer

__all__ = [
    "Canaries",
    "CanarySet",
    "PairCanary",
    "DIRECTIONS",
    "both_directions",
    "box_canaries",
    "box_ends",
    "category_canaries",
    "fresh_canary_game",
    "Mapper",
    "in_process",
    "membership_game",
    "pair_canary",
    "require_neighbours",
    "sparse_canaries",
    "vector_canaries",
]

VECTOR, CATEGORY, RECORD = "vector", "category", "record"
FIRST_CHUNK = 100
CHUNK_ELEMENTS = 1_000_000
RUNS_PER_CHUNK = 10_000  # a chunk of a slow mechanism's runs is a unit of work that Dask can spread
FRESH_GROUP = 100  # runs with fresh canaries played per call of the mapper
SEED_BOUND = 2**63
DIRECTIONS = ("members score higher", "members score lower")
"""The two arms of `both_directions`, in its order."""


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
    """Return m distinct canaries ±norm·e_i of dimension `dim`: on distinct coordinates (exactly orthogonal) while m ≤ dim.

    The worst-case canaries for ℓ1-clipped sums (Laplace noise), where a
    dense unit vector would be shrunk by the ℓ1 clipping; `replace` as in
    `vector_canaries`. Records keep the width `dim`: past dim canaries, the
    others are the negations of canaries already made (2·dim distinct
    records in all), each still a record of that width.

    Raises:
        InvalidParameterError: when m > 2·dim (no more distinct records of this kind exist).
    """
    m = check_int(m, "canaries", "sparse_canaries")
    dim = check_int(dim, "dim", "sparse_canaries")
    norm = check_real(norm, "norm", "sparse_canaries", low=0.0, low_open=True)
    if m > 2 * dim:
        raise InvalidParameterError(
            f"Records of width {dim} allow at most {2 * dim} distinct sparse canaries (±norm on one entry); got {m} canaries."
        )
    coordinates = rng.permutation(dim)[:m]
    signs = rng.choice(np.array([-norm, norm]), size=coordinates.size)
    if m > dim:
        sign_of = signs[np.argsort(coordinates)]
        again = rng.permutation(dim)[:m - dim]
        coordinates, signs = np.concatenate([coordinates, again]), np.concatenate([signs, -sign_of[again]])
    records = np.zeros((m, dim))
    records[np.arange(m), coordinates] = signs
    return CanarySet(VECTOR, records, np.zeros((0, dim)), -records if replace else None)


def category_canaries(m: int, *, bins: int, replace: bool = False, null_record: Any = None) -> CanarySet:
    """Return m canaries, one category each, skipping the null record; under `replace` OUT slots hold the next category.

    The categories are 0, 1, … in order, without `null_record` (a declared
    category that adds nothing is no canary). Needs bins ≥ m (add/remove)
    or bins ≥ m + 1 (replace-one, one spare category), plus one when the
    null record is one of the bins.
    """
    m = check_int(m, "canaries", "category_canaries")
    usable = [c for c in range(bins) if not _is_category(null_record, c)]
    needed = (m + 1 if replace else m) + bins - len(usable)
    if bins < needed:
        raise InvalidParameterError(
            f"{m} category canaries need a mechanism with at least {needed} bins; it has {bins} "
            f"(pass --param bins={needed})."
        )
    absent = np.full(m, usable[m]) if replace else None
    return CanarySet(CATEGORY, np.asarray(usable[:m], dtype=int), np.zeros(0, dtype=int), absent)


def _is_category(null_record: Any, category: int) -> bool:
    """Return True when `null_record` is the number `category`."""
    try:
        return null_record is not None and float(null_record) == category
    except (TypeError, ValueError):
        return False


def box_ends(spec: BoxRecords, null_record: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Return (near, far): per entry, the end of the box nearer the record that adds nothing, and the other end.

    That record is the declared `null_record` (a number, or a record of the
    box's width), else 0, the record that adds nothing to a sum; a tie puts
    `low` near. A record at `far` differs from one at `near` in every entry
    and lies at least as far from the null record, so it is never the null
    record and moves a sum (by itself), a mean of records at `near` and a
    count alike.
    """
    reference = np.zeros(spec.width)
    try:
        given = np.asarray(null_record, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        given = np.zeros(0)
    if null_record is not None and given.size in (1, spec.width) and np.all(np.isfinite(given)):
        reference = np.broadcast_to(given, (spec.width,))
    low_near = np.abs(spec.low - reference) <= np.abs(spec.high - reference)
    return np.where(low_near, float(spec.low), float(spec.high)), np.where(low_near, float(spec.high), float(spec.low))


def box_canaries(m: int, *, spec: BoxRecords, rng: np.random.Generator, replace: bool = False,
                 null_record: Any = None, worst: bool = False) -> CanarySet:
    """Return m canaries at corners of the box of `spec`, never its near corner (`box_ends`).

    `worst`: every canary is the far corner, the record that moves a sum
    most and a mean of near-corner records most; else each entry is near or
    far at random, with at least one far entry per canary. Every canary is a
    record the box declares. `replace` (replace-one): an OUT canary's slot
    holds the opposite corner, the record farthest from it. No base records
    (set `base` with dataclasses.replace, e.g. at the near corner).
    """
    m = check_int(m, "canaries", "box_canaries")
    near, far = box_ends(spec, null_record)
    take_far = np.ones((m, spec.width), dtype=bool) if worst else rng.random((m, spec.width)) < 0.5
    lacking = np.flatnonzero(~take_far.any(axis=1))
    take_far[lacking, rng.integers(spec.width, size=lacking.size)] = True
    records = np.where(take_far, far, near)
    absent = spec.low + spec.high - records if replace else None
    return CanarySet(VECTOR, records, np.zeros((0, spec.width)), absent)


@dataclasses.dataclass(frozen=True, eq=False)
class PairCanary:
    """The canary of a neighbouring pair (d0, d1): a run is on d1 when the canary is in, on d0 when it is out.

    The datasets reach the mechanism as given (arrays, data frames, dicts of
    columns). `records` is d1's differing record and `absent` d0's in its
    slot (None when d1 holds one record more), as arrays of numbers when
    they are numbers (for the inner-product scorer), else None.
    """

    d0: Any
    d1: Any
    records: np.ndarray | None
    absent: np.ndarray | None
    kind: str = RECORD
    size: int = 1

    def dataset(self, included: Any) -> Any:
        """Return d1 when the canary is included, else d0."""
        return self.d1 if bool(np.asarray(included, dtype=bool).reshape(-1)[0]) else self.d0


def pair_canary(d0: Any, d1: Any) -> PairCanary:
    """Return the canary of the neighbouring pair (d0, d1): one record replaced, or one record more in either.

    Raises:
        InvalidParameterError: when the datasets do not differ in exactly one record.
    """
    a, b = records_of_pair(d0, d1)
    if len(a) == len(b):
        changed = np.flatnonzero(~_same_records(a, b))
        if changed.size != 1:
            raise InvalidParameterError(
                f"A pair canary needs datasets differing in exactly one record; they differ in {changed.size}."
            )
        return PairCanary(d0, d1, _numbers(b[changed]), _numbers(a[changed]))
    long, short = (b, a) if len(b) > len(a) else (a, b)
    at = inserted_at(long, short) if len(long) == len(short) + 1 else None
    if at is None:
        raise InvalidParameterError("A pair canary needs one dataset to be the other with one record added or removed.")
    if long is a:
        return PairCanary(d1, d0, _numbers(a[at:at + 1]), None)
    return PairCanary(d0, d1, _numbers(b[at:at + 1]), None)


def _same_records(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    width = int(np.prod(a.shape[1:], dtype=int))
    return np.all(a.reshape(len(a), width) == b.reshape(len(b), width), axis=1)


def _numbers(record: np.ndarray) -> np.ndarray | None:
    """Return a record as floats, or None when it is not made of numbers."""
    try:
        return np.asarray(record, dtype=float)
    except (TypeError, ValueError):
        return None


Canaries = Union[CanarySet, PairCanary]
"""What a membership game inserts: canaries dpaudit made, or the differing record of a pair."""


def require_neighbours(mech: Mechanism, canaries: Canaries, included: Any, *, remedy: str) -> None:
    """Raise unless, for every canary, the datasets with and without it (the others as `included`) are neighbours for `mech`.

    Run before any trial, so that a game never audits datasets outside the
    mechanism's claim (`dpaudit.mechanisms.base.not_neighbours`: its own
    check, or its relation's definition with its null record). A local
    check (`dpaudit.mechanisms.neighbours.local`: the relation's definition,
    dpaudit's own checks) answers on two datasets that differ in one slot as
    on that slot alone, so it sees the whole dataset once and then each
    canary's slot alone: linear in m, where m whole pairs are quadratic.

    Raises:
        InvalidParameterError: naming the first canary whose datasets are not neighbours, and `remedy`.
    """
    mask = np.asarray(included, dtype=bool).reshape(-1)
    pairs: Iterator[tuple[np.ndarray, np.ndarray]]
    if isinstance(canaries, CanarySet) and is_local(mech.neighbours):
        whole = canaries.dataset(mask)
        _refuse(mech, "the records of the dataset", not_neighbours(mech, *records_of_pair(whole, whole)), remedy)
        pairs = (_slot_alone(canaries, i) for i in range(canaries.size))
    else:
        pairs = (_with_and_without(canaries, mask, i) for i in range(canaries.size))
    for i, (with_it, without) in enumerate(pairs):
        which = "the canary" if canaries.size == 1 else f"canary {i}"
        _refuse(mech, f"the datasets with and without {which}", not_neighbours(mech, *records_of_pair(with_it, without)),
                remedy)


def _with_and_without(canaries: Canaries, mask: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the datasets with canary i in and out, the other canaries as `mask`."""
    with_it, without = mask.copy(), mask.copy()
    with_it[i], without[i] = True, False
    return canaries.dataset(with_it), canaries.dataset(without)


def _slot_alone(canaries: CanarySet, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Return canary i's slot alone, in and out: no base record, no other canary, the dataset's dtype kept."""
    absent = None if canaries.absent is None else canaries.absent[i:i + 1]
    one = dataclasses.replace(canaries, records=canaries.records[i:i + 1], absent=absent, base=canaries.base[:0], position=0)
    return one.dataset([True]), one.dataset([False])


def _refuse(mech: Mechanism, which: str, reason: str | None, remedy: str) -> None:
    """Raise InvalidParameterError when `reason` says why `which` are not neighbours for `mech`."""
    if reason:
        raise InvalidParameterError(
            f"dpaudit cannot play this game on '{mech.name}': {which} are not neighbours for it ({reason}); {remedy}."
        )


REMEDY = "declare the records it takes (blackbox(..., records=...)), or play its default pair (canary='pair')"
"""What a refused canary game suggests."""


Mapper = Callable[[Callable[[int], Any], int], list]
"""`mapper(play, n)` returns [play(0), ..., play(n − 1)], each value in its index's place, wherever the calls run
(in process, or on Dask workers: `dpaudit.execution.runs.map_runs`). Every call draws from its own seed,
fixed before any runs, so the game's outputs do not depend on where or in which order they ran."""


def in_process(play: Callable[[int], Any], n: int) -> list:
    """Return [play(0), ..., play(n − 1)], called here in turn: the default `Mapper`."""
    return [play(i) for i in range(n)]


def _scores_on(mech: Mechanism, data: Any, count: int, canary: Canaries, scorer: CanaryScorer,
               seed: np.random.SeedSequence, mapper: Mapper) -> np.ndarray:
    """Return the first canary's scores in `count` outputs on `data`, drawn in chunks of bounded size.

    The first chunk (FIRST_CHUNK outputs, here) gives one output's size; the
    rest go through `mapper` in chunks of at most CHUNK_ELEMENTS numbers and
    RUNS_PER_CHUNK outputs. Chunk i draws from child i of `seed`, and the
    chunks' sizes depend on the count and the output's size only, so the
    scores are the same whatever runs the chunks.
    """
    if count == 0:
        return np.zeros(0)
    first = min(FIRST_CHUNK, count)
    outputs = mech.sample(data, first, np.random.default_rng(seed.spawn(1)[0]))
    head = scorer.score(outputs, canary)[:, 0]
    chunk = max(FIRST_CHUNK, min(RUNS_PER_CHUNK, CHUNK_ELEMENTS // max(1, outputs[0].size)))
    sizes = [min(chunk, count - start) for start in range(first, count, chunk)]
    seeds = seed.spawn(len(sizes))

    def play(i: int) -> np.ndarray:
        return scorer.score(mech.sample(data, sizes[i], np.random.default_rng(seeds[i])), canary)[:, 0]

    return np.concatenate([head, *mapper(play, len(sizes))])


def membership_game(
    mech: Mechanism, canary: Canaries, *, runs: int, scorer: CanaryScorer, rng: np.random.Generator,
    remedy: str = REMEDY, mapper: Mapper = in_process,
) -> Observations:
    """Return the Observations of R runs, each with `canary` in with probability 1/2 (a fair coin per run).

    One canary, so only two datasets, checked to be neighbours for `mech`
    before any run (`require_neighbours`; refused naming `remedy`): the
    runs with it are drawn in vectorized chunks, the runs without it in
    others (bounded memory; run by `mapper`, each from its own seed). Sound
    input for the threshold and GDP estimators: the runs are independent
    (Jagielski, Ullman, Oprea, NeurIPS 2020).
    """
    runs = check_int(runs, "runs", "membership_game", low=2)
    if canary.size != 1:
        raise InvalidParameterError(f"membership_game takes one canary; got {canary.size}.")
    require_neighbours(mech, canary, [True], remedy=remedy)
    truth = rng.random(runs) < 0.5
    scores = np.empty(runs)
    for member in (True, False):
        where = truth == member
        seed = np.random.SeedSequence(int(rng.integers(SEED_BOUND)))
        scores[where] = _scores_on(mech, canary.dataset([member]), int(where.sum()), canary, scorer, seed, mapper)
    return Observations(scores=scores, truth=truth)


def fresh_canary_game(
    mech: Mechanism, make_canary: Callable[[np.random.Generator], CanarySet], *, runs: int,
    scorer: CanaryScorer, rng: np.random.Generator, remedy: str = REMEDY, mapper: Mapper = in_process,
) -> Observations:
    """Return the Observations of R runs, each with a fresh canary `make_canary(run_rng)` in with probability 1/2.

    Every run has its own dataset, so the mechanism is called once per run (a
    black box cannot batch different datasets); run r draws its canary and
    its output from child r of one seed, and `mapper` plays the runs in
    groups of FRESH_GROUP; each run's two datasets are checked to be
    neighbours for `mech` before it is played (`require_neighbours`). Runs
    are independent and identically distributed, so the estimators'
    assumptions hold; the bound is about the canary distribution's average,
    which DP bounds canary by canary.
    """
    runs = check_int(runs, "runs", "fresh_canary_game", low=2)
    truth = rng.random(runs) < 0.5
    seeds = np.random.SeedSequence(int(rng.integers(SEED_BOUND))).spawn(runs)
    starts = range(0, runs, FRESH_GROUP)

    def play(group: int) -> np.ndarray:
        scores = []
        for run in range(starts[group], min(starts[group] + FRESH_GROUP, runs)):
            run_rng = np.random.default_rng(seeds[run])
            canary = make_canary(run_rng)
            require_neighbours(mech, canary, [True], remedy=remedy)
            output = mech.sample(canary.dataset([truth[run]]), 1, run_rng)
            scores.append(scorer.score(output, canary)[0, 0])
        return np.array(scores, dtype=float)

    return Observations(scores=np.concatenate(mapper(play, len(starts))), truth=truth)


def both_directions(obs: Observations) -> tuple[Observations, Observations]:
    """Return a multi-run game's scores as two arms, in the order of DIRECTIONS: as scored, and negated.

    Whether a member raises or lowers a score depends on the mechanism (a
    record that lowers a sum, a count of negative records, a release that
    is negated), which a black box does not tell. Certifying both arms, each
    at β/2 (`dpaudit.audit.estimators.certify.certify_best`, union bound),
    pays for looking in both directions on the same scores; the negated arm
    reads nothing the scores do not hold.
    """
    return obs, Observations(scores=-obs.scores, truth=obs.truth)
