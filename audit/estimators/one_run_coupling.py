"""A second tail bound for the one-run game with δ > 0: coupling the guesses with coin flips.

The game of Steinke, Nasr, Jagielski (NeurIPS 2023, arXiv 2305.08846): m
canaries, each included independently with probability 1/2, one run, r
guesses fixed in number before the scores are seen, W of them right. If the
mechanism is (ε, δ)-DP with respect to each canary, p = e^ε/(1+e^ε) and
s ∈ {1, 2} is the number of directions guessed (1: IN only or OUT only), then
for every slack b ≥ 0

    P[W ≥ v] ≤ P[Binomial(r, p) ≥ v − b] + s·m(1 − p)δ / (2(b + 1)).

Proof. Fix i and the other canaries' bits S₋ᵢ; let P₊, P₋ be the laws of the
output Y with canary i IN or OUT, and πᵢ = P(Sᵢ = IN | Y, S₋ᵢ) =
P₊/(P₊ + P₋). Since p/(1 − p) = e^ε,

    E[(πᵢ − p)₊] = ½ ∫ ((1 − p)P₊ − pP₋)₊ = ½(1 − p) ∫ (P₊ − e^ε P₋)₊ ≤ ½(1 − p)δ,

and likewise for 1 − πᵢ (guessing OUT). Reveal the guessed canaries one at a
time in any order fixed by Y, the k-th with a fresh uniform Uₖ: it is right
iff Uₖ ≤ qₖ, qₖ = P(guess k right | Y, canaries revealed before), which gives
the game's joint law. qₖ averages the posterior of a right guess given Y and
all other bits over those not yet revealed, so by Jensen and the display,
summed over the canaries, E[Σₖ (qₖ − p)₊] ≤ Δ = s·m(1 − p)δ/2. Now
1[Uₖ ≤ qₖ] ≤ 1[Uₖ ≤ p] + 1[p < Uₖ ≤ qₖ]: the first terms are r independent
Bernoulli(p) coins (Uₖ is independent of Y and the past), the second sum N
has E[N] ≤ Δ, so P[W ≥ v] ≤ P[Binomial(r, p) ≥ v − b] + P[N ≥ b + 1] and
Markov's inequality ends the proof. At m = r = 1 it is tight: P[W = 1] ≤
p + (1 − p)δ, the best accuracy of any (ε, δ)-DP guess.

Each b gives a bound on the same tail, so their minimum does too, and so does
its minimum with Steinke, Nasr and Jagielski's bound: `coupling_p_value` is
a p-value for "(ε, δ)-DP". Where mδ is large against β (many canaries, few
guesses: a leak confined to the top scores) it rejects what their bound
cannot, whose δ term never falls below 2mδ/v.

The p-value is not monotone in ε (its δ term shrinks as ε grows), but the
hypotheses are nested, so any ε it rejects is a valid lower bound: under a
mechanism that is (ε*, δ)-DP, every ε ≥ ε* is a true hypothesis, each
p-value is a bound G_ε(v) on P[W ≥ v] that falls as v grows, and so is
their infimum over ε ≥ ε*; it is below β with probability at most β, and
only then is any ε ≥ ε* rejected. `coupling_epsilon` therefore reports the
largest ε it finds rejected.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import betaincinv, expit, logit
from scipy.stats import binom

SLACK_STEPS = 64
"""Slacks b = 0, ..., SLACK_STEPS − 1 are all tried, larger ones on a ladder 10% apart."""
SEARCH_POINTS = 200
"""The ε search evaluates the p-value at this many points, then refines the last one rejected."""
XTOL = 1e-9
"""Tolerance of the refinement: the ε returned is rejected and within about this of the boundary."""


def _slacks(correct: int) -> np.ndarray:
    """Return the slacks b tried: every b < SLACK_STEPS, then a ladder 10% apart, all below `correct`."""
    ladder = np.round(SLACK_STEPS * 1.1 ** np.arange(200)).astype(np.int64)
    slacks = np.unique(np.concatenate([np.arange(SLACK_STEPS), ladder]))
    return slacks[slacks < correct]


def _p_values(*, canaries: int, guesses: int, correct: int, epsilon: np.ndarray, delta: float,
              sides: int) -> np.ndarray:
    """Return the bound at each ε of `epsilon` for each slack: shape (slacks, len(epsilon))."""
    p = expit(np.asarray(epsilon, dtype=float))
    slack = _slacks(correct)[:, None]
    spill = sides * canaries * (1.0 - p) * delta / 2.0
    return binom.sf(correct - slack - 1, guesses, p) + spill / (slack + 1)


def coupling_p_value(*, canaries: int, guesses: int, correct: int, epsilon: float, delta: float,
                     sides: int = 2) -> float:
    """Return min over b of P[Binomial(r, p) ≥ v − b] + s·m(1 − p)δ/(2(b + 1)), capped at 1.

    The p-value of "(ε, δ)-DP with respect to each canary" after `correct` (v)
    of `guesses` (r) right among `canaries` (m), guessing in `sides` (s)
    directions, by the coupling in the module docstring; b runs over
    `_slacks(v)`. Each b bounds the tail on its own, and the set of slacks
    only grows with v, so the minimum still falls as v grows (what the
    p-value argument needs).
    """
    if correct == 0:
        return 1.0
    values = _p_values(canaries=canaries, guesses=guesses, correct=correct,
                       epsilon=np.array([epsilon]), delta=delta, sides=sides)
    return min(1.0, float(values.min()))


def coupling_epsilon(*, canaries: int, guesses: int, correct: int, delta: float, beta: float,
                     sides: int = 2, above: float = 0.0) -> float:
    """Return the largest ε ≥ `above` found with `coupling_p_value` < beta (0 if none).

    Sound at level beta for any ε it returns (the hypotheses are nested; see
    the module docstring). The search runs on [above, ε₀], ε₀ the bound with
    no δ term and b = 0 (P[Binomial(r, p) ≥ v] = β, which every slack only
    raises), over SEARCH_POINTS points, then bisects after the last one
    rejected; a rejected island narrower than the spacing may be missed,
    which only lowers the bound. `above` skips what another bound already
    certifies.
    """
    if correct == 0:
        return 0.0
    ceiling = float(logit(betaincinv(correct, guesses - correct + 1, beta)))
    if not ceiling > above:
        return 0.0
    grid = np.linspace(above, ceiling, SEARCH_POINTS + 1)
    kwargs = dict(canaries=canaries, guesses=guesses, correct=correct, delta=delta, sides=sides)
    rejected = (_p_values(epsilon=grid, **kwargs) < beta).any(axis=0)
    if not rejected.any():
        return 0.0
    last = int(np.flatnonzero(rejected)[-1])
    if last == SEARCH_POINTS:
        return ceiling

    def margin(eps: float) -> float:
        return beta - coupling_p_value(epsilon=eps, **kwargs)

    low, high = float(grid[last]), float(grid[last + 1])
    if margin(high) > 0.0:
        return high
    root = float(brentq(margin, low, high, xtol=XTOL))
    return next((x for x in (root, root - 2.0 * XTOL) if x > low and margin(x) > 0.0), low)
