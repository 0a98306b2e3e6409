"""Which canaries a one-run audit guesses: fixed rules, stopping rules, and the share of β each is paid.

The game of Steinke, Nasr, Jagielski (NeurIPS 2023, arXiv 2305.08846): m
canaries ranked by score. A fixed rule (k+, k−) guesses IN for the k+
highest scores and OUT for the k− lowest; its tail bounds hold because k+
and k− are fixed before the scores are seen.

A stopping rule guesses IN down the ranking and stops before its (j+1)-th
wrong guess, so the number of guesses T_j is chosen by the data. It needs
no new bound: T_j ≥ L happens exactly when the fixed rule (L, 0) has at most
j wrong, that is W_L ≥ L − j. So for any bound G(r, v) on P[W_r ≥ v] valid
for fixed rules (Steinke–Nasr–Jagielski's, the coupling bound, the f-DP
recursion), the test "reject when G(T_j, T_j − j) ≤ α" has level α: its
rejections all lie in {T_j ≥ L₀}, L₀ the smallest L with G(L, L − j) ≤ α, and
P[T_j ≥ L₀] = P[W_{L₀} ≥ L₀ − j] ≤ α. (With fewer than j+1 wrong among all m
canaries, T_j = m.) The nested-hypotheses argument behind reporting the
largest ε rejected carries over: the rejections at all ε ≥ ε* lie in
{T_j ≥ L₁}, L₁ the smallest L any of them rejects. A leak confined to the
top few canaries is thus caught at the length of its clean run, whatever
that is, without a Bonferroni correction over lengths.

Rules are combined by a weighted Bonferroni correction, each tested at its
share of β fixed before the scores are seen, or tested jointly
(`one_run.joint`), the shares then weighting the rules in one max-statistic.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np
from dpaudit.attacks.observations import Observations
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_int

__all__ = [
    "GAME_REQUIREMENT",
    "GUESS_FRACTIONS",
    "STOPPING_SHARE",
    "Guesses",
    "Rules",
    "best_of_guesses",
    "check_rules",
    "default_errors_allowed",
    "default_guess_counts",
    "make_guesses",
    "rank_truth",
]

GAME_REQUIREMENT = "each canary included independently with probability 1/2"
GUESS_FRACTIONS = (0.1, 0.2, 0.5, 0.8, 1.0)
"""Balanced default rules: r = this share of m, half IN and half OUT guesses."""
STOPPING_SHARE = 0.65
"""Share of β the default rules spend on stopping rules.

A stopping rule ends its run at a local maximum of precision, where a leak
confined to a few canaries (or a few percent of them) shows; a dense signal
is seen by several overlapping balanced rules at once, so it loses less when
they get less. Chosen on the laws of `benchmarks/score_estimators.py` and
`benchmarks/sparse_leaks.py` (seven sparse leaks), where the former 0.35
lost most sparse leaks to jax_privacy's auditing estimator (Bonferroni over
the ROC hull's thresholds) at 2·10³ canaries.
"""
STOPPING_RATIO = 4
"""Default stopping rules allow j = 0, 1, 4, 16, ... wrong guesses, up to m/STOPPING_LONGEST."""
STOPPING_LONGEST = 32
"""With no leak a stopping rule guesses about 2j canaries; the defaults keep that to m/16 or fewer."""


def default_guess_counts(m: int) -> list[tuple[int, int]]:
    """Return the fixed (k+, k−) rules tried by default: r = 10%, 20%, 50%, 80%, 100% of m, half IN and half OUT."""
    balanced = sorted({(max(1, int(f * m) // 2),) * 2 for f in GUESS_FRACTIONS})
    return [pair for pair in balanced if sum(pair) <= m]


def default_errors_allowed(m: int) -> list[int]:
    """Return the stopping rules tried by default: j = 0, 1, 4, 16, ... wrong guesses allowed, j ≤ m/32.

    They depend on m alone, so they are fixed before the scores are seen.
    """
    allowed, j = [0], 1
    while j * STOPPING_LONGEST <= m:
        allowed.append(j)
        j *= STOPPING_RATIO
    return allowed


@dataclasses.dataclass(frozen=True)
class Rules:
    """The rules an estimator tries, with each one's share of β (summing to 1)."""

    guess_counts: list[tuple[int, int]]
    errors_allowed: list[int]
    shares: np.ndarray

    def details(self, beta: float) -> dict[str, Any]:
        """Return the rules tried and the β each was paid, fixed rules first (`LowerBound.details`)."""
        levels = [float(b) for b in beta * self.shares]
        fixed = len(self.guess_counts)
        return {"candidates": [list(p) for p in self.guess_counts], "beta_per_candidate": levels[:fixed],
                "errors_allowed": list(self.errors_allowed), "beta_per_errors_allowed": levels[fixed:]}


def _check_pairs(guess_counts: Any, canaries: int, owner: str) -> list[tuple[int, int]]:
    try:
        pairs = [(int(kp), int(km)) for kp, km in guess_counts]
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"The 'guess_counts' parameter of {owner} must be a list of (k_plus, k_minus) "
            f"pairs; got {guess_counts!r} instead."
        ) from None
    for kp, km in pairs:
        check_int(kp, "k_plus", owner, low=0)
        check_int(km, "k_minus", owner, low=0)
        if not 1 <= kp + km <= canaries:
            raise InvalidParameterError(
                f"{owner} needs 1 ≤ k_plus + k_minus ≤ {canaries} (the number of canaries); "
                f"got k_plus={kp}, k_minus={km}."
            )
    return pairs


def _check_errors(errors_allowed: Any, canaries: int, owner: str) -> list[int]:
    try:
        allowed = list(errors_allowed)
    except TypeError:
        raise InvalidParameterError(
            f"The 'errors_allowed' parameter of {owner} must be a list of integers; got {errors_allowed!r} instead."
        ) from None
    for j in allowed:
        check_int(j, "errors_allowed", owner, low=0)
        if j >= canaries:
            raise InvalidParameterError(f"{owner} needs errors_allowed below {canaries} (the number of canaries); got {j}.")
    return [int(j) for j in allowed]


def check_rules(guess_counts: Any, errors_allowed: Any, canaries: int, owner: str) -> Rules:
    """Return the rules to try: the defaults when both are None, else exactly those given, β shared evenly.

    Defaults: `default_guess_counts(m)` with 1 − STOPPING_SHARE of β, split
    evenly, and `default_errors_allowed(m)` with STOPPING_SHARE, split in
    proportion to 1/√(1 + index) (the most for j = 0, a leak's clean run;
    long runs, which stop where a leak of a few percent fades, keep enough).
    Shares fixed before the scores are seen keep the union bound valid
    (weighted Bonferroni).
    """
    if guess_counts is None and errors_allowed is None:
        pairs, allowed = default_guess_counts(canaries), default_errors_allowed(canaries)
        falling = 1.0 / np.sqrt(np.arange(1, len(allowed) + 1))
        shares = np.concatenate([np.full(len(pairs), (1.0 - STOPPING_SHARE) / len(pairs)),
                                 STOPPING_SHARE * falling / falling.sum()])
        return Rules(pairs, allowed, shares)
    pairs = [] if guess_counts is None else _check_pairs(guess_counts, canaries, owner)
    allowed = [] if errors_allowed is None else _check_errors(errors_allowed, canaries, owner)
    if not pairs and not allowed:
        raise InvalidParameterError(f"{owner} needs at least one rule: 'guess_counts' and 'errors_allowed' are both empty.")
    size = len(pairs) + len(allowed)
    return Rules(pairs, allowed, np.full(size, 1.0 / size))


@dataclasses.dataclass(frozen=True)
class Guesses:
    """One rule's outcome: IN for the `k_plus` highest scores, OUT for the `k_minus` lowest.

    For a stopping rule (`errors_allowed` = j), k+ = T_j and `correct` =
    T_j − j, the count its tail bound is evaluated at (module docstring).
    """

    k_plus: int
    k_minus: int
    correct: int
    beta: float
    errors_allowed: int | None = None

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
                "correct": self.correct, "beta_of_rule": self.beta, "errors_allowed_of_rule": self.errors_allowed}


def rank_truth(obs: Observations, rng: np.random.Generator) -> np.ndarray:
    """Return the canaries' truth ordered by score, highest first, ties broken at random.

    Random tie-breaking keeps the ranking a function of the scores alone
    (never of the canaries' order, which may follow the truth). It draws from
    a child stream of `rng` (`Generator.spawn`): a generator seeded like the
    one that drew the game would otherwise reuse its draws and break ties
    along the truth.
    """
    order = rng.spawn(1)[0].permutation(obs.size)
    return obs.truth[order[np.argsort(-obs.scores[order], kind="stable")]]


def make_guesses(ranked_truth: np.ndarray, *, rules: Rules, beta: float) -> list[Guesses]:
    """Return the outcome of each rule on the ranked truth (`rank_truth`) at its share of `beta`."""
    size = ranked_truth.size
    in_among_top = np.concatenate([[0], np.cumsum(ranked_truth)])
    n_in = int(in_among_top[-1])
    wrong = np.flatnonzero(~ranked_truth)
    levels = beta * rules.shares
    fixed = [Guesses(k_plus=kp, k_minus=km, beta=float(level),
                     correct=int(in_among_top[kp]) + km - (n_in - int(in_among_top[size - km])))
             for (kp, km), level in zip(rules.guess_counts, levels)]
    stopped = [int(wrong[j]) if j < wrong.size else size for j in rules.errors_allowed]
    return fixed + [Guesses(k_plus=t, k_minus=0, correct=t - j, beta=float(level), errors_allowed=j)
                    for t, j, level in zip(stopped, rules.errors_allowed, levels[len(fixed):])]


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
