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

The best adversary of the coupling. Markov's inequality forgets when the
excess is spent; an adversary gains most by spending it late, on the last
guess of a lucky run. The coupling allows exactly this: guess k is right
with probability qₖ, chosen adaptively, at the price (qₖ − p)₊, with
expected total price at most Δ. For any λ ≥ 0,

    P[W ≥ v] ≤ V_λ + λΔ,  V_λ = sup over strategies of E[1(W ≥ v) − λ Σₖ (qₖ − p)₊],

since the actual strategy's price has expectation ≤ Δ. V_λ is a finite
dynamic programme over (guesses left n, right guesses still needed w):
V(n, w) = V(n−1, w) + pD + (1 − p)(D − λ)₊ with D = V(n−1, w−1) − V(n−1, w),
V(·, 0) = 1, V(0, w > 0) = 0 (the price is linear in qₖ, so qₖ = p or 1 is
best). Uniforms independent of the past make information beyond (n, w)
useless to the adversary. Each λ gives a valid bound, so the minimum over a
fixed grid of λ does; by LP duality it approaches the exact supremum of
P[W ≥ v] over strategies with expected price Δ, which every slack bound above
also bounds, so it is never far above their minimum and often far below
(about p^(v−1) instead of P[Binomial(r, p) ≥ v − 1] when Δ is large). It
costs r·v per λ and ε, so it is computed for r·v ≤ ADVERSARY_CELLS only.

The p-value is not monotone in ε (its δ term shrinks as ε grows), but the
hypotheses are nested, so any ε it rejects is a valid lower bound: under a
mechanism that is (ε*, δ)-DP, every ε ≥ ε* is a true hypothesis, each
p-value is a bound G_ε(v) on P[W ≥ v] at every v, and so is their infimum
over ε ≥ ε*; it is below β with probability at most β (every v where it is
lies at or above the smallest such v₀, and P[W ≥ v₀] ≤ G(v₀) < β), and
only then is any ε ≥ ε* rejected. `coupling_epsilon` therefore reports the
largest ε it finds rejected.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PRICES", "coupling_epsilon", "coupling_p_value", "expected_excess"]

SLACK_STEPS = 64
"""Slacks b = 0, ..., SLACK_STEPS − 1 are all tried, larger ones on a ladder 10% apart."""
ADVERSARY_CELLS = 20_000
"""The adversary's programme is solved when guesses × correct is at most this (its cost per λ and ε)."""
PRICES = np.geomspace(1e-10, 1.0, 64)
"""The grid of prices λ the adversary's bound is minimised over (λ ≥ 1 buys nothing: λ = 1 is the last)."""
SEARCH_POINTS = 200
"""The ε search evaluates the slack bounds at this many points, then refines the last one rejected."""
ADVERSARY_POINTS = 8
"""The ε search evaluates the adversary's bound at this many points above what the slack bounds reject."""
XTOL = 1e-9
"""Tolerance of the refinement: the ε returned is rejected and within about this of the boundary."""


def _slacks(correct: int) -> np.ndarray:
    """Return the slacks b tried: every b < SLACK_STEPS, then a ladder 10% apart, all below `correct`."""
    ladder = np.round(SLACK_STEPS * 1.1 ** np.arange(200)).astype(np.int64)
    slacks = np.unique(np.concatenate([np.arange(SLACK_STEPS), ladder]))
    return slacks[slacks < correct]


def expected_excess(*, canaries: int, p: np.ndarray, delta: float, sides: int) -> np.ndarray:
    """Return Δ = s·m(1 − p)δ/2, the expected excess of the coupling."""
    return sides * canaries * (1.0 - p) * delta / 2.0


def _slack_bounds(*, canaries: int, guesses: int, correct: int, epsilon: np.ndarray, delta: float,
                  sides: int) -> np.ndarray:
    """Return min over slacks b of P[Binomial(r, p) ≥ v − b] + Δ/(b + 1) at each ε of `epsilon`."""
    from scipy.special import expit
    from scipy.stats import binom

    p = expit(epsilon)
    slack = _slacks(correct)[:, None]
    spill = expected_excess(canaries=canaries, p=p, delta=delta, sides=sides)
    return np.min(binom.sf(correct - slack - 1, guesses, p) + spill / (slack + 1), axis=0)


def _adversary_bounds(*, canaries: int, guesses: int, correct: int, epsilon: np.ndarray, delta: float,
                      sides: int) -> np.ndarray:
    """Return min over λ in PRICES of V_λ + λΔ at each ε of `epsilon` (the programme of the module docstring).

    `value[..., w]` holds V(n, w) for the n guesses left, per ε and λ; only
    the w that V(r, v) needs are updated (w ≤ n, and w ≥ v − (r − n)).
    """
    from scipy.special import expit

    p = expit(epsilon)[:, None, None]
    value = np.zeros((epsilon.size, PRICES.size, correct + 1))
    value[..., 0] = 1.0
    for n in range(1, guesses + 1):
        low, high = max(1, correct - guesses + n), min(correct, n)
        gain = value[..., low - 1:high] - value[..., low:high + 1]
        value[..., low:high + 1] += p * gain + (1.0 - p) * np.maximum(gain - PRICES[:, None], 0.0)
    spill = expected_excess(canaries=canaries, p=p[:, :, 0], delta=delta, sides=sides)
    return np.min(value[..., correct] + PRICES * spill, axis=1)


def _bounds(*, canaries: int, guesses: int, correct: int, epsilon: np.ndarray, delta: float, sides: int,
            adversary: bool) -> np.ndarray:
    """Return the coupling p-value at each ε: the slack bounds, and the adversary's if asked, capped at 1."""
    kwargs = dict(canaries=canaries, guesses=guesses, correct=correct, epsilon=np.asarray(epsilon, dtype=float),
                  delta=delta, sides=sides)
    bounds = _slack_bounds(**kwargs)
    if adversary:
        bounds = np.minimum(bounds, _adversary_bounds(**kwargs))
    return np.minimum(bounds, 1.0)


def _adversary_affordable(*, guesses: int, correct: int, delta: float) -> bool:
    """Return whether the adversary's programme is solved: δ > 0 and r·v ≤ ADVERSARY_CELLS."""
    return delta > 0.0 and guesses * correct <= ADVERSARY_CELLS


def coupling_p_value(*, canaries: int, guesses: int, correct: int, epsilon: float, delta: float,
                     sides: int = 2) -> float:
    """Return the coupling p-value of "(ε, δ)-DP with respect to each canary", capped at 1.

    After `correct` (v) of `guesses` (r) right among `canaries` (m), guessing
    in `sides` (s) directions: the minimum over slacks b in `_slacks(v)` of
    P[Binomial(r, p) ≥ v − b] + s·m(1 − p)δ/(2(b + 1)), and, where
    `_adversary_affordable`, of the best adversary's bound min_λ V_λ + λΔ (module
    docstring). Each bounds P[W ≥ v] on its own, so their minimum does, and a
    bound G(v) on P[W ≥ v] at every v is a p-value: its rejections at level α
    lie in {W ≥ v₀}, v₀ the smallest v with G(v) ≤ α, of probability ≤ α.
    """
    if correct == 0:
        return 1.0
    return float(_bounds(canaries=canaries, guesses=guesses, correct=correct, epsilon=np.array([epsilon]),
                         delta=delta, sides=sides,
                         adversary=_adversary_affordable(guesses=guesses, correct=correct, delta=delta))[0])


def _last_rejected(rejected: np.ndarray) -> int | None:
    """Return the index of the last grid point rejected, None if none is."""
    return int(np.flatnonzero(rejected)[-1]) if rejected.any() else None


def coupling_epsilon(*, canaries: int, guesses: int, correct: int, delta: float, beta: float,
                     sides: int = 2, above: float = 0.0) -> float:
    """Return the largest ε ≥ `above` found with `coupling_p_value` < beta (0 if none).

    Sound at level beta for any ε it returns (the hypotheses are nested; see
    the module docstring). The search runs on [above, ε₀], ε₀ the bound with
    no δ term and b = 0 (P[Binomial(r, p) ≥ v] = β, which every slack and
    every adversary only raises): the slack bounds at SEARCH_POINTS points,
    the adversary's (where affordable) at ADVERSARY_POINTS points above the
    last one rejected, then a bisection after the last point rejected. A
    rejected island narrower than the spacing may be missed, which only
    lowers the bound. `above` skips what another bound already certifies.
    """
    from scipy.optimize import brentq
    from scipy.special import betaincinv, logit

    if correct == 0:
        return 0.0
    ceiling = float(logit(betaincinv(correct, guesses - correct + 1, beta)))
    if not ceiling > above:
        return 0.0
    kwargs = dict(canaries=canaries, guesses=guesses, correct=correct, delta=delta, sides=sides)
    grid = np.linspace(above, ceiling, SEARCH_POINTS + 1)
    last = _last_rejected(_bounds(epsilon=grid, adversary=False, **kwargs) < beta)
    if _adversary_affordable(guesses=guesses, correct=correct, delta=delta):
        start = above if last is None else float(grid[last])
        finer = np.linspace(start, ceiling, ADVERSARY_POINTS + 1)
        found = _last_rejected(_bounds(epsilon=finer, adversary=True, **kwargs) < beta)
        if found is not None and (last is None or finer[found] > grid[last]):
            grid, last = finer, found
    if last is None:
        return 0.0
    if last == grid.size - 1:
        return ceiling

    def margin(eps: float) -> float:
        return beta - coupling_p_value(epsilon=eps, **kwargs)

    low, high = float(grid[last]), float(grid[last + 1])
    if margin(high) > 0.0:
        return high
    root = float(brentq(margin, low, high, xtol=XTOL))
    return next((x for x in (root, root - 2.0 * XTOL) if x > low and margin(x) > 0.0), low)
