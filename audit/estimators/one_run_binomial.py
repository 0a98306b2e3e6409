"""One-run auditing: Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run".

NeurIPS 2023, arXiv 2305.08846. m canaries, each included independently with
probability 1/2, one run of the mechanism, every canary scored. The auditor
guesses IN for the k+ highest scores, OUT for the k− lowest and abstains on
the rest: r = k+ + k− guesses, v of them correct. If the mechanism is
(ε, δ)-DP with respect to each canary, the number W of correct guesses obeys
(their main theorem for approximate DP)

    P[W ≥ v] ≤ f(v) + 2mδ · max_{1≤i≤v} (f(v−i) − f(v)) / i,
    f(v) = P[Binomial(r, e^ε/(1+e^ε)) ≥ v].

The right side is a p-value for the hypothesis "(ε, δ)-DP"; so is the
coupling bound of `one_run_coupling`, which bounds the same tail and is far
smaller where mδ is large against β. The estimator rejects at an ε when
either does (their minimum is a p-value too) and reports the largest ε
rejected at level β = 1 − confidence. k+ and k− must be fixed before the
scores are seen, or chosen from a small fixed list with the choice paid for
(Bonferroni: β divided by the length of the list).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.one_run_coupling import coupling_epsilon
from dpaudit.mechanisms.errors import InvalidParameterError
from dpaudit.mechanisms.validation import check_delta, check_int, check_probability_open
from scipy.optimize import brentq
from scipy.special import expit
from scipy.stats import binom

GAME_REQUIREMENT = "each canary included independently with probability 1/2"
GUESS_FRACTIONS = (0.1, 0.2, 0.5, 1.0)
"""Balanced default rules: r = this share of m, half IN and half OUT guesses."""
SPARSE_SHARE = 0.35
"""Share of β the default rules spend on IN-only guesses of the top scores (a leak confined to a few canaries)."""
SPARSE_SMALLEST = 8
"""The fewest IN-only guesses a default rule makes: k of k right has chance 2^−k with no leak, too much below 8."""


def default_guess_counts(m: int) -> list[tuple[int, int]]:
    """Return the (k+, k−) rules tried by default, balanced ones first, then the IN-only ones.

    Balanced: r = 10%, 20%, 50%, 100% of m, half IN and half OUT guesses.
    IN-only (k− = 0): k+ = m/8, m/16, ... down to SPARSE_SMALLEST, for a leak
    confined to a few canaries (the top 1% of IN scores, say). They depend on m
    alone, so they are fixed before the scores are seen.
    """
    balanced = sorted({(max(1, int(f * m) // 2),) * 2 for f in GUESS_FRACTIONS})
    sparse, k = [], m // 8
    while k >= SPARSE_SMALLEST:
        sparse.append((k, 0))
        k //= 2
    return [pair for pair in balanced if sum(pair) <= m] + sparse


def _default_shares(pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """Return each default rule's share of β: 1 − SPARSE_SHARE split among the balanced, SPARSE_SHARE among the IN-only."""
    sparse = np.array([km == 0 for _, km in pairs])
    if not sparse.any():
        return np.full(len(pairs), 1.0 / len(pairs))
    return np.where(sparse, SPARSE_SHARE / sparse.sum(), (1.0 - SPARSE_SHARE) / (~sparse).sum())


@dataclasses.dataclass(frozen=True)
class Guesses:
    """One rule's outcome: IN for the `k_plus` highest scores, OUT for the `k_minus` lowest."""

    k_plus: int
    k_minus: int
    correct: int
    beta: float

    @property
    def guesses(self) -> int:
        """Return r = k+ + k−, the number of canaries guessed (the rest abstained on)."""
        return self.k_plus + self.k_minus

    @property
    def sides(self) -> int:
        """Return the number of directions guessed: 1 (IN only or OUT only) or 2."""
        return int(self.k_plus > 0) + int(self.k_minus > 0)

    def details(self) -> dict[str, Any]:
        """Return the evidence for `LowerBound.details`."""
        return {"k_plus": self.k_plus, "k_minus": self.k_minus, "guesses": self.guesses,
                "correct": self.correct, "beta_of_rule": self.beta}


def check_guess_counts(
    guess_counts: Any, canaries: int, owner: str
) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Return (`guess_counts` as a non-empty list of (k+, k−) pairs with 1 ≤ k+ + k− ≤ canaries, shares of β).

    None means `default_guess_counts(canaries)`, with 1 − SPARSE_SHARE of β
    for its balanced rules and SPARSE_SHARE for its IN-only ones; a list
    given shares β evenly. Shares fixed before the scores are seen keep the
    union bound valid (weighted Bonferroni).
    """
    if guess_counts is None:
        pairs = default_guess_counts(canaries)
        return pairs, _default_shares(pairs)
    try:
        pairs = [(int(kp), int(km)) for kp, km in guess_counts]
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"The 'guess_counts' parameter of {owner} must be a list of (k_plus, k_minus) "
            f"pairs; got {guess_counts!r} instead."
        ) from None
    if not pairs:
        raise InvalidParameterError(f"The 'guess_counts' parameter of {owner} must not be empty.")
    for kp, km in pairs:
        check_int(kp, "k_plus", owner, low=0)
        check_int(km, "k_minus", owner, low=0)
        if not 1 <= kp + km <= canaries:
            raise InvalidParameterError(
                f"{owner} needs 1 ≤ k_plus + k_minus ≤ {canaries} (the number of canaries); "
                f"got k_plus={kp}, k_minus={km}."
            )
    return pairs, np.full(len(pairs), 1.0 / len(pairs))


def make_guesses(
    obs: Observations, *, guess_counts: Sequence[tuple[int, int]], betas: Sequence[float],
    rng: np.random.Generator,
) -> list[Guesses]:
    """Return the outcome of each (k+, k−) rule on `obs`, with its level from `betas`, ties broken at random.

    Random tie-breaking keeps the guesses a function of the scores alone
    (never of the canaries' order, which may follow the truth). It draws from
    a child stream of `rng` (`Generator.spawn`): a generator seeded like the
    one that drew the game would otherwise reuse its draws and break ties
    along the truth.
    """
    order = rng.spawn(1)[0].permutation(obs.size)
    ranked = order[np.argsort(-obs.scores[order], kind="stable")]
    in_among_top = np.concatenate([[0], np.cumsum(obs.truth[ranked])])
    n_in = int(in_among_top[-1])
    return [
        Guesses(k_plus=kp, k_minus=km,
                correct=int(in_among_top[kp]) + km - (n_in - int(in_among_top[obs.size - km])),
                beta=level)
        for (kp, km), level in zip(guess_counts, map(float, betas))
    ]


def one_run_p_value(*, canaries: int, guesses: int, correct: int, epsilon: float,
                    delta: float) -> float:
    """Return the p-value of "(ε, δ)-DP" after `correct` of `guesses` right among `canaries`.

    f(v) + 2mδ · max_{1≤i≤v} (f(v−i) − f(v)) / i with f(v) = P[Binomial(r,
    e^ε/(1+e^ε)) ≥ v] (Steinke, Nasr, Jagielski 2023), capped at 1; the max
    is taken over all i at once with vectorized binomial tails.
    """
    q = expit(epsilon)
    tail = float(binom.sf(correct - 1, guesses, q))
    if delta == 0.0 or correct == 0:
        return tail
    i = np.arange(1, correct + 1)
    excess = binom.sf(correct - i - 1, guesses, q) - tail
    return min(1.0, tail + 2.0 * canaries * delta * float(np.max(excess / i)))


def largest_rejected(objective: Callable[[float], float], *, xtol: float = 1e-7) -> float:
    """Return the largest x ≥ 0 with objective(x) > 0 (rejected), 0 if objective(0) ≤ 0.

    `objective` must be continuous and have a single sign change from
    positive to non-positive on x ≥ 0 (checked for the one-run p-values in
    tests); the root is found by doubling then brentq, and the value returned
    is on the rejected side.
    """
    if objective(0.0) <= 0.0:
        return 0.0
    low, high = 0.0, 1.0
    while objective(high) > 0.0:
        low, high = high, 2.0 * high
    root = float(brentq(objective, low, high, xtol=xtol))
    return root if objective(root) > 0.0 else max(low, root - 2.0 * xtol)


def one_run_epsilon(*, canaries: int, guesses: int, correct: int, delta: float,
                    beta: float) -> float:
    """Return the largest ε whose one-run p-value is ≤ beta.

    With probability ≥ 1 − beta the mechanism is not (ε', δ)-DP for any ε' below it.
    """
    return largest_rejected(
        lambda eps: beta - one_run_p_value(canaries=canaries, guesses=guesses,
                                           correct=correct, epsilon=eps, delta=delta)
    )


def rule_epsilon(guesses: Guesses, *, canaries: int, delta: float, floor: float = 0.0) -> float:
    """Return the largest ε one rule rejects at its level, by Steinke–Nasr–Jagielski's bound or the coupling bound.

    Valid at level `guesses.beta`: both bound the tail of the same count, so
    their minimum does (see `one_run_coupling`). Only ε above `floor` is
    searched (0 is returned when none is rejected there): their p-value rises
    with ε, so it rejects above `floor` only if it rejects at `floor`.
    """
    counts = dict(canaries=canaries, guesses=guesses.guesses, correct=guesses.correct, delta=delta)
    level = guesses.beta
    rejects_floor = one_run_p_value(epsilon=floor, **counts) < level
    theorem = one_run_epsilon(beta=level, **counts) if rejects_floor else 0.0
    return max(theorem, coupling_epsilon(beta=level, sides=guesses.sides, above=max(theorem, floor), **counts))


def best_of_guesses(
    outcomes: Sequence[Guesses], bound: Callable[[Guesses, float], float]
) -> tuple[Guesses, float]:
    """Return the outcome with the largest bound and that bound (0 if none rejects).

    `bound(outcome, floor)` returns the outcome's bound, or any value ≤ floor
    (the best so far) when it cannot exceed it, which lets it skip the search.
    """
    best, best_value = outcomes[0], 0.0
    for outcome in outcomes:
        if outcome.correct == 0:
            continue
        value = bound(outcome, best_value)
        if value > best_value:
            best, best_value = outcome, value
    return best, best_value


def one_run_lower_bound(
    obs: Observations,
    *,
    delta: float,
    confidence: float = 0.95,
    guess_counts: Sequence[tuple[int, int]] | None = None,
    rng: np.random.Generator | int,
) -> LowerBound:
    """Return the assumption-free one-run ε lower bound (Steinke, Nasr, Jagielski 2023).

    `guess_counts` lists the (k+, k−) rules, fixed before the scores were
    seen; β = 1 − confidence is split evenly among them (Bonferroni), each
    rule's bound is `rule_epsilon` (their theorem or the coupling bound of
    `one_run_coupling`, whichever rejects more) and the best is reported.
    None means `default_guess_counts(m)`, with β split as `check_guess_counts`
    says (weighted Bonferroni). With probability ≥ `confidence`,
    the mechanism is not (ε', δ)-DP with respect to one canary for any ε' <
    the returned ε, provided the truth was drawn as the game requires (each
    canary included independently with probability 1/2).

    Args:
        obs: the m canaries' scores and truth.
        delta, confidence: of the bound.
        guess_counts: the (k+, k−) rules (default: `default_guess_counts(m)`).
        rng: breaks ties among equal scores at random.

    Returns:
        A `LowerBound` (method "one-run") with the guesses and correct ones.

    Raises:
        InvalidParameterError: for observations without both classes or bad guess counts.
    """
    owner = "one_run_lower_bound"
    delta = check_delta(delta, owner)
    beta = 1.0 - check_probability_open(confidence, "confidence", owner)
    obs.require_both_classes("The one-run estimator")
    pairs, shares = check_guess_counts(guess_counts, obs.size, owner)
    outcomes = make_guesses(obs, guess_counts=pairs, betas=beta * shares,
                            rng=np.random.default_rng(rng))

    best, epsilon = best_of_guesses(
        outcomes, bound=lambda g, floor: rule_epsilon(g, canaries=obs.size, delta=delta, floor=floor)
    )
    return LowerBound(
        epsilon=epsilon, confidence=confidence, method="one-run", delta=delta, trials=obs.size,
        details={"canaries": obs.size, **best.details(), **candidate_details(pairs, beta * shares),
                 "game": GAME_REQUIREMENT},
    )


def candidate_details(pairs: Sequence[tuple[int, int]], betas: np.ndarray) -> dict[str, Any]:
    """Return the rules tried (`candidates`) and the β each was paid for (`beta_per_candidate`, in the same order)."""
    return {"candidates": [list(p) for p in pairs], "beta_per_candidate": [float(b) for b in betas]}
