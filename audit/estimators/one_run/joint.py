"""Testing the one-run rules jointly: a max-statistic Monte Carlo test instead of Bonferroni.

Weighted Bonferroni (`one_run.rules`) pays for every rule as if their
rejections never overlapped. The default rules are nested pieces of one
ranking and overlap a lot, so under the null their union rejects well below
β (the soundness counts of `benchmarks/score_estimators.py`). This test
spends all of β on the union, as Westfall and Young's max-statistic (min-p)
procedure does, by comparing the observed game with simulated coin flips.

Domination. Guess IN on the top K+ ranks and OUT on the bottom K− (K+ + K−
≤ m, so every rule guesses a canary the same way) and reveal the guessed
canaries in rank order, fixed by the output and by tie-breaking coins. In
the coupling of `one_run.coupling` (after Steinke, Nasr, Jagielski, NeurIPS
2023, arXiv 2305.08846) the k-th guess is right iff Uₖ ≤ qₖ, Uₖ uniform and
independent of the past; with Bₖ = 1[Uₖ ≤ p], p = e^ε/(1 + e^ε), the right
guesses C satisfy C ≤ B except where some p < Uₖ ≤ qₖ, which has
probability at most Δ = s·m(1 − p)δ/2 under (ε, δ)-DP (Markov's inequality
on the expected excess; s is the number of directions guessed). B is i.i.d.
Bernoulli(p). So for every event E that grows with C,
P[C ∈ E] ≤ P[B ∈ E] + Δ, for all rules at once.

Statistic. S_p(C) = min over rules of log P[Binomial(r, p) ≥ W] − log(share):
the most significant rule, each weighted by its share of β (a stopping rule
with T guesses before its (j+1)-th wrong one counts as W = T − j right of
r = T). More right guesses, or a later stop, lower every term, so
{S_p(C) < c} grows with C.

Test at ε. n i.i.d. copies of B are simulated, the same uniforms for every
ε; c_ε is the (k+1)-th smallest of their statistics, k = ⌊(β − Δ)(n + 1)⌋ − 1,
and ε is rejected when S_p(C) < c_ε. Under (ε, δ)-DP this has probability at
most (k + 1)/(n + 1) + Δ ≤ β: S_p(B) and the n copies are exchangeable, so
S_p(B) is among the k + 1 smallest with probability at most (k + 1)/(n + 1).
The test is exact however few the draws (a Monte Carlo test); fewer draws
only cost power.

Reporting. ε runs over a grid fixed in advance, from 0 upward; the bound
is the last grid point of the first run of rejections. If the mechanism is
(ε*, δ)-DP and the bound exceeds ε*, the first grid point g ≥ ε* was
rejected although the mechanism is (g, δ)-DP: probability at most β.
"""

from __future__ import annotations

import math

import numpy as np
from dpaudit.audit.estimators.one_run.coupling import expected_excess
from dpaudit.audit.estimators.one_run.rules import Guesses, Rules

__all__ = ["EPSILONS", "EXCEEDANCES", "MAX_WORK", "joint_draws", "joint_epsilon"]

GRID_STEP = 0.01
GRID_RATIO = 0.01
GRID_MAX = 30.0
"""The ε grid: steps of max(GRID_STEP, GRID_RATIO·ε) from 0 to GRID_MAX (the bound is at most 1% below the test's)."""
EPSILONS = np.concatenate([
    np.linspace(0.0, 1.0, round(1.0 / GRID_STEP) + 1),
    (1.0 + GRID_RATIO) ** np.arange(1, math.ceil(math.log(GRID_MAX) / math.log1p(GRID_RATIO)) + 1),
])
CHUNKS = (4, 16, 64)
"""Grid points evaluated together, growing to the last width (the scan stops at the first one not rejected)."""
EXCEEDANCES = 50
"""Draws: EXCEEDANCES / (β − Δ), so that about this many simulated games fall below the critical value."""
MAX_WORK = 500_000_000
"""Draws × guessed canaries × passes over them the joint test may spend (beyond, Bonferroni).

One pass counts the fixed rules, and a stopping rule allowing j wrong
guesses takes j + 1 more (`_running_order`).
"""
DELTA_SHARE = 0.25
"""The joint test is used when its δ price Δ at ε = 0 is at most this share of β (else Bonferroni)."""


def _layout(rules: Rules, canaries: int) -> tuple[int, int] | None:
    """Return (K+, K−), the ranks guessed IN from the top and OUT from the bottom, or None if rules conflict."""
    bottom = max((km for _, km in rules.guess_counts), default=0)
    top = max((kp for kp, _ in rules.guess_counts), default=0)
    if rules.errors_allowed:
        top = canaries - bottom
    return (top, bottom) if top + bottom <= canaries else None


def _delta_price(epsilon: np.ndarray | float, *, layout: tuple[int, int], canaries: int, delta: float) -> np.ndarray:
    """Return Δ = s·m(1 − p)δ/2, the probability the coupling with coins fails (`one_run.coupling`)."""
    from scipy.special import expit

    sides = int(layout[0] > 0) + int(layout[1] > 0)
    return expected_excess(canaries=canaries, p=expit(np.asarray(epsilon, dtype=float)), delta=delta, sides=sides)


def joint_draws(rules: Rules, *, canaries: int, delta: float, beta: float) -> int | None:
    """Return the number of simulated games the joint test needs, or None where it does not apply.

    It applies to two rules or more (one rule alone gets its exact tail
    bound) when every rule guesses each canary the same way, the δ price at
    ε = 0 is at most DELTA_SHARE of β and the simulation fits in MAX_WORK;
    all depend on the rules, m, δ and β alone, so the choice is made before
    the scores are seen.
    """
    layout = _layout(rules, canaries)
    if layout is None or rules.shares.size < 2:
        return None
    spare = beta - float(_delta_price(0.0, layout=layout, canaries=canaries, delta=delta))
    if spare < (1.0 - DELTA_SHARE) * beta:
        return None
    draws = math.ceil(EXCEEDANCES / spare)
    passes = 1 + sum(j + 1 for j in rules.errors_allowed)
    return draws if draws * sum(layout) * passes <= MAX_WORK else None


def _first_right(right: np.ndarray, uniforms: np.ndarray | None) -> np.ndarray:
    """Return, per guess, the first grid index at which it is right: 0 or never (observed), by U < p (simulated)."""
    from scipy.special import expit

    if uniforms is None:
        return np.where(right, 0, EPSILONS.size).astype(np.int16)
    return np.searchsorted(expit(EPSILONS), uniforms, side="right").astype(np.int16)


def _running_order(first: np.ndarray, k: int) -> np.ndarray:
    """Return the k-th largest of first[:, :L+1] for every L (−1 while fewer than k): the (k)-th wrong guess's index."""
    level = np.maximum.accumulate(first, axis=1)
    for _ in range(k - 1):
        shifted = np.concatenate([np.full((first.shape[0], 1), -1), level[:, :-1]], axis=1)
        level = np.maximum.accumulate(np.minimum(first, shifted), axis=1)
    return level


def _counts_at(values: np.ndarray, ends: np.ndarray, start: int, width: int) -> np.ndarray:
    """Return, per prefix values[:, :end] (end in `ends`, increasing) and row, how many are ≤ g, g = start … start + width − 1."""
    rows, blocks = values.shape[0], ends.size
    values = values[:, :ends[-1]]
    block = np.searchsorted(ends, np.arange(values.shape[1]), side="right")
    bins = np.clip(values - start, 0, width)
    index = (np.arange(rows)[:, None] * blocks + block) * (width + 1) + bins
    counts = np.bincount(index.ravel(), minlength=rows * blocks * (width + 1)).reshape(rows, blocks, width + 1)
    return np.cumsum(np.cumsum(counts[:, :, :width], axis=2), axis=1).transpose(1, 0, 2)


def _tabulated_log_tail(correct: np.ndarray, wrong: int | None, guesses: int | None, p: np.ndarray) -> np.ndarray:
    """Return log P[Binomial(guesses, p) ≥ correct] at every (row, grid point).

    It is read from a table over the values `correct` takes in each column.
    Either `guesses` is fixed (a fixed rule) or `wrong` is (a stopping rule:
    guesses = correct + wrong). The counts of one column span a few
    standard deviations, so the table is far smaller than the array.
    """
    from scipy.stats import binom

    low = int(correct.min())
    values = np.arange(low, int(correct.max()) + 1)[:, None]
    table = binom.logsf(values - 1, values + wrong if guesses is None else guesses, p)
    return np.take_along_axis(table, correct - low, axis=0)


class _Games:
    """The observed game (row 0) and the simulated ones, as first-right grid indices per guess."""

    def __init__(self, ranked: np.ndarray, rules: Rules, layout: tuple[int, int], uniforms: np.ndarray):
        top, bottom = layout
        right_top, right_bottom = ranked[:top], ~ranked[::-1][:bottom]
        self.rules = rules
        self.top = np.vstack([_first_right(right_top, None), _first_right(right_top, uniforms[:, :top])])
        self.bottom = np.vstack([_first_right(right_bottom, None), _first_right(right_bottom, uniforms[:, top:])])
        self.top_ends = np.unique([kp for kp, _ in rules.guess_counts if kp > 0])
        self.bottom_ends = np.unique([km for _, km in rules.guess_counts if km > 0])
        self.stops = [_running_order(self.top, j + 1) for j in rules.errors_allowed]

    def _prefix_counts(self, values: np.ndarray, ends: np.ndarray, start: int, width: int) -> dict[int, np.ndarray]:
        counts = _counts_at(values, ends, start, width) if ends.size else []
        return {0: np.zeros((values.shape[0], width), dtype=int), **dict(zip(ends.tolist(), counts))}

    def statistic(self, start: int, width: int) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """Return S on the grid slice (rows × width) and each rule's (correct, guesses) counts there."""
        from scipy.special import expit

        p = expit(EPSILONS[start:start + width])[None, :]
        top = self._prefix_counts(self.top, self.top_ends, start, width)
        bottom = self._prefix_counts(self.bottom, self.bottom_ends, start, width)
        outcomes, logs = [], []
        for kp, km in self.rules.guess_counts:
            correct = top[kp] + bottom[km]
            outcomes.append((correct, np.full_like(correct, kp + km)))
            logs.append(_tabulated_log_tail(correct, None, kp + km, p))
        for j, stops in zip(self.rules.errors_allowed, self.stops):
            stopped = _counts_at(stops, np.array([self.top.shape[1]]), start, width)[0]
            outcomes.append((stopped - j, stopped))
            logs.append(_tabulated_log_tail(stopped - j, j, None, p))
        weighted = np.array(logs) - np.log(self.rules.shares)[:, None, None]
        return np.min(weighted, axis=0), outcomes


def joint_epsilon(
    ranked: np.ndarray, *, rules: Rules, canaries: int, delta: float, beta: float, draws: int,
    rng: np.random.Generator,
) -> tuple[float, Guesses, float]:
    """Return (ε, the most significant rule's outcome there, the level scale) of the joint test.

    ε is the last grid point of the first run of rejections (module
    docstring); with probability ≥ 1 − beta the mechanism is not (ε', δ)-DP
    for any ε' below it, when the game's truth was drawn as it requires.
    The level scale c is such that each rule rejected where its own tail
    fell below c·share: the Bonferroni level it was in effect given.
    """
    top, bottom = _layout(rules, canaries)
    games = _Games(ranked, rules, (top, bottom), rng.random((draws, top + bottom)))
    limits = np.floor((beta - _delta_price(EPSILONS, layout=(top, bottom), canaries=canaries, delta=delta))
                      * (draws + 1)).astype(int) - 1
    record, start, chunk = None, 0, 0
    while start < EPSILONS.size:
        width = min(CHUNKS[min(chunk, len(CHUNKS) - 1)], EPSILONS.size - start)
        statistic, outcomes = games.statistic(start, width)
        critical = np.sort(statistic[1:], axis=0)[limits[start:start + width], np.arange(width)]
        rejected = statistic[0] < critical
        stop = width if rejected.all() else int(np.argmin(rejected))
        if stop > 0 or record is None:
            at = max(stop - 1, 0)
            record = (start + at, critical[at], [(int(c[0, at]), int(r[0, at])) for c, r in outcomes])
        if stop < width:
            break
        start, chunk = start + width, chunk + 1
    index, critical, counts = record
    epsilon = float(EPSILONS[index])
    return epsilon, _best_rule(rules, counts, critical, epsilon), float(np.exp(critical))


def _best_rule(rules: Rules, counts: list[tuple[int, int]], critical: float, epsilon: float) -> Guesses:
    """Return the outcome of the rule with the smallest weighted log tail at ε, with its effective level."""
    from scipy.special import expit
    from scipy.stats import binom

    p = expit(epsilon)
    logs = [float(binom.logsf(c - 1, r, p)) - math.log(s) for (c, r), s in zip(counts, rules.shares)]
    best = int(np.argmin(logs))
    level = float(rules.shares[best] * np.exp(critical))
    fixed = len(rules.guess_counts)
    correct, guesses = counts[best]
    if best < fixed:
        kp, km = rules.guess_counts[best]
        return Guesses(k_plus=kp, k_minus=km, correct=correct, beta=level)
    return Guesses(k_plus=guesses, k_minus=0, correct=correct, beta=level, errors_allowed=rules.errors_allowed[best - fixed])
