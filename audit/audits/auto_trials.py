"""`trials="auto"`: audit in rounds of growing size until the verdict is decided or a budget is spent.

Round k is a whole audit of its own (test chosen and rates estimated on
fresh outputs, from a seed of its own) of `FIRST_ROUND · 2^k` trials per
dataset. The rounds that fit in the trial budget are planned before any
runs, and round k certifies its bound at failure probability
β · n_k / Σ n_j (its share of the planned trials). By the union bound, every
round's bound holds at once with probability ≥ 1 − β, so the largest of
them is a lower bound at confidence 1 − β whenever the audit stops, early
or not: the stopping rule may look at the bounds, since each is valid
whatever rule chose to run it. The result keeps every round run and its
share (`Selection`), so that `recertify` pays for the choice of the best
round again rather than certifying it alone at all of β. Rounds stop when a violation is certified,
when the bound reaches `tight` × the claimed ε (decided: the claim is
nearly attained; by default `tight` is 1, since a wrong mechanism may
well reach 0.9 of its claim on its honest part before a rarer leak shows),
or when the next round would exceed the trial or the time budget. Under a
time budget the first round too is sized to fit it, from the time a few
probe draws take (`first_round`), before any round is planned.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

import numpy as np
from dpaudit.audit.results import phases
from dpaudit.audit.results.provenance import ROUNDS, Selection
from dpaudit.audit.results.result import VIOLATION, AuditResult
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_int

__all__ = [
    "AUTO",
    "FIRST_ROUND",
    "MAX_TRIALS",
    "AutoBudget",
    "Round",
    "audit_in_rounds",
    "combine_rounds",
    "first_round",
    "planned_rounds",
    "round_seed",
]

AUTO = "auto"
FIRST_ROUND = 100_000
MAX_TRIALS = 20_000_000
TIGHT = 1.0
SMALLEST_ROUND = 100
FIRST_ROUND_SHARE = 0.25
"""The share of `max_seconds` the first round may take (the later rounds double; about 1/4 + 1/2 fit)."""
PROBE_SHARE = 0.02
"""The share of `max_seconds` the timing probe may take."""

Round = Callable[[int, int, float], AuditResult]


@dataclasses.dataclass(frozen=True)
class AutoBudget:
    """What `trials="auto"` (or `"sequential"`) may spend: `max_trials` per dataset over all rounds, `max_seconds` of wall
    time (None: no limit), and the fraction `tight` of the claimed ε at which a consistent audit counts as decided.
    `give_up` (`trials="sequential"` only): stop once the claim is out of reach within `max_trials`."""

    max_trials: int = MAX_TRIALS
    max_seconds: float | None = None
    tight: float = TIGHT
    give_up: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_trials", check_int(self.max_trials, "max_trials", "audit_mechanism", low=10))
        if self.max_seconds is not None and not (isinstance(self.max_seconds, (int, float)) and self.max_seconds > 0):
            raise InvalidParameterError(
                f"The 'max_seconds' parameter of audit_mechanism must be a positive number; got {self.max_seconds!r} instead."
            )
        if not (isinstance(self.tight, (int, float)) and 0.0 < self.tight <= 1.0):
            raise InvalidParameterError(
                f"The 'tight' parameter of audit_mechanism must be in (0, 1]; got {self.tight!r} instead."
            )
        if not isinstance(self.give_up, bool):
            raise InvalidParameterError(f"The 'give_up' parameter of audit_mechanism must be True or False; got {self.give_up!r}.")


def planned_rounds(max_trials: int, first: int = FIRST_ROUND) -> list[int]:
    """Return the round sizes first, 2·first, 4·first, ... whose total fits in `max_trials` (at least one round)."""
    sizes, total, size = [], 0, min(first, max_trials)
    while total + size <= max_trials:
        sizes.append(size)
        total += size
        size *= 2
    return sizes


def first_round(draw: Callable[[int], object], max_seconds: float | None) -> int:
    """Return the first round's trials per dataset: FIRST_ROUND, or fewer when a time budget could not afford it.

    `draw(n)` draws n outputs on each dataset (outputs thrown away, from a
    stream of their own); it is timed at 16, 64, 256, … outputs until one
    call takes `PROBE_SHARE` of `max_seconds`, and the round is sized so
    that it takes about `FIRST_ROUND_SHARE` of it (at least SMALLEST_ROUND).
    """
    if max_seconds is None:
        return FIRST_ROUND
    n, spent = 16, 0.0
    while n <= FIRST_ROUND // 10:
        start = time.perf_counter()
        draw(n)
        spent = time.perf_counter() - start
        if spent >= PROBE_SHARE * max_seconds:
            break
        n *= 4
    per_trial = spent / min(n, FIRST_ROUND // 10 * 4)
    affordable = int(FIRST_ROUND_SHARE * max_seconds / max(per_trial, 1e-12))
    return int(np.clip(affordable, SMALLEST_ROUND, FIRST_ROUND))


def round_seed(seed: int, k: int) -> int:
    """Return the seed of round `k`: independent streams for every round, the same for the same `seed`."""
    return int(np.random.SeedSequence([seed, k]).generate_state(1)[0])


def audit_in_rounds(run_round: Round, *, seed: int, confidence: float, epsilon: float, budget: AutoBudget,
                    first: int = FIRST_ROUND) -> AuditResult:
    """Return the result of the round with the largest bound, its bound at `confidence` over all rounds.

    `run_round(trials, seed, confidence)` runs one whole audit; the rounds
    are `first`, 2·`first`, … trials, planned before any of them runs. Its
    `phases.auto` lists the rounds run (trials, seed, bound), the trials
    drawn in all, why the rounds stopped, and the budget; its `selection`
    every round run, with its share of β.
    """
    start = time.perf_counter()
    sizes = planned_rounds(budget.max_trials, first)
    shares = tuple(size / sum(sizes) for size in sizes)
    beta = 1.0 - confidence
    rounds: list[AuditResult] = []
    stopped = "budget of trials"
    for k, size in enumerate(sizes):
        if rounds and budget.max_seconds is not None and _over_time(rounds[-1], start, budget.max_seconds):
            stopped = "budget of seconds"
            break
        rounds.append(run_round(size, round_seed(seed, k), 1.0 - beta * shares[k]))
        if rounds[-1].verdict == VIOLATION:
            stopped = "violation certified"
            break
        if rounds[-1].lower_bound.epsilon >= budget.tight * epsilon:
            stopped = f"bound within {budget.tight:g} of the claim"
            break
    auto = phases.AutoRounds(rounds=(), stopped=stopped, max_trials=budget.max_trials, max_seconds=budget.max_seconds,
                             tight=budget.tight)
    combined = combine_rounds(rounds, shares[:len(rounds)], confidence=confidence, auto=auto)
    return dataclasses.replace(combined, seed=seed, seconds=time.perf_counter() - start)


def _over_time(last: AuditResult, start: float, max_seconds: float) -> bool:
    """Return True when the next round (twice the last, so about twice its time) would end past `max_seconds`."""
    return time.perf_counter() - start + 2.0 * last.seconds > max_seconds


def combine_rounds(rounds: list[AuditResult], shares: tuple[float, ...], *, confidence: float,
                   auto: phases.AutoRounds) -> AuditResult:
    """Return the round with the largest bound, its bound at `confidence` over all rounds, `phases.auto` listing them.

    Round k must have been certified at confidence 1 − β·`shares[k]` (β =
    1 − `confidence`, the shares summing to at most 1): then every round's
    bound holds at once with probability ≥ 1 − β, and the largest with them.
    `auto` gives why the rounds stopped and their budget; its rounds are
    replaced by these. The result's `selection` keeps every round and its share.
    """
    kept = max(range(len(rounds)), key=lambda k: rounds[k].lower_bound.epsilon)
    best = rounds[kept]
    listed = tuple(phases.Round(r.lower_bound.trials, r.seed, r.lower_bound.epsilon, r.lower_bound.confidence)
                   for r in rounds)
    bound = None if best.bound is None else dataclasses.replace(best.bound, confidence=confidence)
    return dataclasses.replace(best, lower_bound=dataclasses.replace(best.lower_bound, confidence=confidence),
                               phases=dataclasses.replace(best.phases, auto=dataclasses.replace(auto, rounds=listed)),
                               bound=bound, selection=Selection(ROUNDS, tuple(rounds), tuple(shares), kept))
