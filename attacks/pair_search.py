"""Choose a neighbouring pair when the user gives none: StatDP's input patterns plus random search.

Candidates: the patterns of StatDP (Ding, Wang, Wang, Zhang, Kifer, CCS 2018,
§5.1) as modified by DP-Sniper (Bichsel et al., IEEE S&P 2021) — one above,
one below, one above rest below, one below rest above, half-half, all above,
all below, x shape, each also swapped — a sweep of half-half splits, and random pairs from a user-declared
`InputSpace`; or, for the hunt (`hunt_pair`), the default pair and the
neighbours a bug hunter would try (`dpaudit.attacks.neighbour_candidates`:
records at and beyond bounds, NaN and ±inf, huge and tiny numbers, unseen
categories, empty and one-record datasets, floating-point rounding
datasets, datasets filled with NaN, ±inf or a bound but one record).
Each candidate gets a cheap audit: a test is chosen on one half of its
samples and the caller's objective (a conservative projection of the
certified bound) is computed on the other half; the largest wins.

Soundness: the search draws from its own seed stream, SeedSequence([seed,
SEARCH_KEY]), whose entropy differs from the SeedSequence(seed) that an audit
spawns its streams from. The chosen pair is therefore a function of
samples independent of the final audit's samples; conditional on the pair,
the final audit's Clopper–Pearson bound holds with its stated confidence, so
the choice costs no correction (the argument that lets a test be chosen on
one part of the samples and its rates estimated on a fresh part, applied one
level up). Running the final audit on samples that were used here
would void this.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Sequence

import numpy as np
from dpaudit.attacks.distinguish import Objective, select_test
from dpaudit.attacks.neighbour_candidates import CandidatePair, candidate_pairs, neighbouring
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms.base import Mechanism

__all__ = ["HUNT", "InputSpace", "Pair", "hunt_pair", "search_pair", "split_patterns", "statdp_patterns"]

SEARCH_KEY = 0x5EA4C4
HUNT = "hunt"
"""`audit_mechanism(..., search=HUNT)` and `dpaudit audit --hunt`: the pair search among bug-hunter neighbours."""
Pair = tuple[np.ndarray, np.ndarray]


@dataclasses.dataclass(frozen=True)
class InputSpace:
    """Datasets the search may try: `length` entries in [low, high] (integers when `integer`).

    kind "answers": query-answer vectors, neighbours when ‖d0 − d1‖∞ ≤ 1
    (StatDP's convention); kind "records": datasets whose neighbours differ
    in one record (under add-remove without a null record: one record added).
    """

    length: int
    low: float = -10.0
    high: float = 10.0
    integer: bool = False
    kind: str = "answers"


def statdp_patterns(m: int) -> list[tuple[str, Pair]]:
    """Return StatDP's patterns on m answers around (1, …, 1), each also swapped (DP-Sniper's variant)."""
    ones, h = np.ones(m), m // 2
    raw = {
        "one_above": np.concatenate([[0.0], np.ones(m - 1)]),
        "one_below": np.concatenate([[2.0], np.ones(m - 1)]),
        "one_above_rest_below": np.concatenate([[2.0], np.zeros(m - 1)]),
        "one_below_rest_above": np.concatenate([[0.0], np.full(m - 1, 2.0)]),
        "half_half": np.concatenate([np.full(h, 2.0), np.zeros(m - h)]),
        "all_above": np.full(m, 2.0),
        "all_below": np.zeros(m),
        "last_above_rest_below": np.concatenate([np.zeros(m - 1), [2.0]]),
    }
    pairs = [(name, (ones, other)) for name, other in raw.items()]
    x0 = np.concatenate([np.ones(h), np.zeros(m - h)])
    pairs.append(("x_shape", (x0, 1.0 - x0)))
    return pairs + [(f"{name}_swapped", (b, a)) for name, (a, b) in pairs]


def split_patterns(m: int) -> list[tuple[str, Pair]]:
    """Return (1, …, 1) against j twos then m − j zeros, and zeros then twos, for j = 1 … m − 1 (a half-half sweep)."""
    pairs = []
    for j in range(1, m):
        pairs.append((f"above_{j}_then_below", (np.ones(m), np.concatenate([np.full(j, 2.0), np.zeros(m - j)]))))
        pairs.append((f"below_{j}_then_above", (np.ones(m), np.concatenate([np.zeros(j), np.full(m - j, 2.0)]))))
    return pairs


def _random_pairs(space: InputSpace, count: int, rng: np.random.Generator, *, insert: bool = False) -> list[tuple[str, Pair]]:
    """Return `count` random neighbouring pairs in `space`; records: one replaced, or with `insert` (add-remove) one added."""
    pairs = []
    for i in range(count):
        d0 = rng.uniform(space.low, space.high, space.length)
        record = rng.choice([space.low, space.high, rng.uniform(space.low, space.high)])
        if space.kind == "answers":
            d1 = d0 + rng.uniform(-1.0, 1.0, space.length)
        elif insert:
            d1 = np.insert(d0, rng.integers(space.length + 1), record)
        else:
            d1 = d0.copy()
            d1[rng.integers(space.length)] = record
        d0, d1 = np.clip(d0, space.low, space.high), np.clip(d1, space.low, space.high)
        if space.integer:
            d0, d1 = np.round(d0).astype(int), np.round(d1).astype(int)
        pairs.append((f"random_{i}", (d0, d1)))
    return pairs


def _default_candidates(mech: Mechanism, space: InputSpace | None, rng: np.random.Generator, count: int = 16
                       ) -> list[tuple[str, Pair]]:
    """Return the candidates: the mechanism's own pair, StatDP patterns for answer vectors, random pairs in `space`."""
    found = [("default", mech.default_pair)] if mech.default_pair is not None else []
    length = space.length if space else (len(mech.default_pair[0]) if mech.default_pair is not None else None)
    if length is None:
        raise InvalidParameterError(
            f"Mechanism '{mech.name}' has no default pair to search around; give it one with "
            "blackbox(..., default_pair=(d0, d1)) (in Python, an InputSpace or candidates will do too)."
        )
    if (space is None or space.kind == "answers") and length >= 1:  # the patterns move answers: none on an empty dataset
        found += statdp_patterns(length) + split_patterns(length)
    if space is not None:
        found += _random_pairs(space, count, rng, insert=mech.claim.relation.value == "add-remove" and mech.null_record is None)
    return found


def _pair_score(mech: Mechanism, pair: Pair, size: int, rng: np.random.Generator, objective: Objective) -> float:
    """Return `objective` of the held-out counts on `pair`: test chosen on half of `size` samples, counted on the other half."""
    d0, d1 = pair
    return _outputs_score(mech.sample(d0, size, rng), mech.sample(d1, size, rng), objective)


def _outputs_score(out0: np.ndarray, out1: np.ndarray, objective: Objective) -> float:
    """Return `objective` of the held-out counts: a test chosen on the first half of each batch, counted on the second."""
    size = len(out0)
    half = size // 2
    test = select_test(out0[:half], out1[:half], objective=objective).test
    fp = np.count_nonzero(test.rejects(out0[half:]))
    fn = np.count_nonzero(~test.rejects(out1[half:]))
    return float(objective(np.array([fp]), size - half, np.array([fn]), size - half)[0])


def _valid(mech: Mechanism, candidates: Iterable[tuple[str, Pair]]) -> list[tuple[str, Pair]]:
    return [(name, pair) for name, pair in candidates if neighbouring(mech, *pair)]


def search_pair(
    mech: Mechanism,
    *,
    objective: Objective,
    candidates: Sequence[Pair] | None = None,
    budget: int,
    seed: int,
    space: InputSpace | None = None,
) -> Pair:
    """Return the neighbouring pair (d0, d1) on which a cheap audit scores best by `objective`.

    `objective(fp, n0, fn, n1)` is the estimator's guide (e.g. the bound the
    final audit would certify; attacks never compute ε themselves): it chooses
    each candidate's test on half of its samples and scores the test's errors
    on the other half.
    `budget` is the number of outputs per dataset spent on the whole search,
    split evenly over the candidates (given ones, or `_default_candidates`);
    pairs that are not neighbours for `mech` are skipped. Draws come from
    SeedSequence([seed, SEARCH_KEY]), independent of the audit's streams, so
    the final audit of the returned pair stays sound (module docstring).
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, SEARCH_KEY]))
    named = [(f"candidate_{i}", tuple(p)) for i, p in enumerate(candidates)] if candidates is not None else \
        _default_candidates(mech, space, rng)
    pool = _valid(mech, named)
    if not pool:
        raise InvalidParameterError(f"No candidate pair is a neighbouring pair for '{mech.name}'.")
    size = max(budget // len(pool), 200)
    scores = [_pair_score(mech, pair, size, rng, objective) for _, pair in pool]
    return pool[int(np.argmax(scores))][1]


def hunt_pair(mech: Mechanism, *, objective: Objective, budget: int, seed: int, base: Any = None,
              kinds: Iterable[str] | None = None) -> tuple[CandidatePair, int]:
    """Return the pair a cheap audit scores best among the default pair and the bug-hunter neighbours, and how many were tried.

    The candidates (`candidate_pairs(mech, base=, kinds=)`, each a
    neighbouring pair for `mech`, after the default pair as kind "default")
    are a function of the mechanism's declaration alone; each is scored as
    in `search_pair`, on `budget` outputs per dataset split over them, from
    SeedSequence([seed, SEARCH_KEY]). A candidate on which the mechanism
    raises (when it raises on all, its first error is raised), or whose two
    datasets give outputs of two shapes, is dropped. The final audit of the returned pair draws from
    SeedSequence(seed), so its bound needs no correction for the choice
    (module docstring).

    Raises:
        InvalidParameterError: when no candidate is a neighbouring pair.
        MechanismError: when the mechanism raises on every candidate.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, SEARCH_KEY]))
    pool = [CandidatePair("default", *mech.default_pair, "the mechanism's default pair")] \
        if mech.default_pair is not None and neighbouring(mech, *mech.default_pair) else []
    pool += candidate_pairs(mech, base=base, rng=rng, kinds=kinds)
    if not pool:
        raise InvalidParameterError(f"No generated candidate is a neighbouring pair for '{mech.name}'.")
    size = max(budget // len(pool), 200)
    scores, raised = [], []
    with np.errstate(all="ignore"):  # the mechanism's warnings on NaN, ±inf and huge records are its own affair
        for candidate in pool:
            try:
                out0, out1 = mech.sample(candidate.d0, size, rng), mech.sample(candidate.d1, size, rng)
            except MechanismError as exc:
                raised.append(exc)
                out0 = out1 = None
            same = out0 is not None and out0.shape[1:] == out1.shape[1:]  # outputs of two shapes: no test compares them
            scores.append(_outputs_score(out0, out1, objective) if same else -np.inf)
    if len(raised) == len(pool):
        raise raised[0]
    if np.all(np.isneginf(scores)):
        raise InvalidParameterError(f"Mechanism '{mech.name}' gives outputs of two shapes on every generated candidate pair.")
    return pool[int(np.argmax(scores))], len(pool)
