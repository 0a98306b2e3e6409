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
coupling bound of `one_run.coupling`, which bounds the same tail and is far
smaller where mδ is large against β. The estimator rejects at an ε when
either does (their minimum is a p-value too) and reports the largest ε
rejected at level β = 1 − confidence. k+ and k− must be fixed before the
scores are seen, or chosen from a small fixed list with the choice paid for
(Bonferroni: β divided by the length of the list), or chosen by a stopping
rule (`one_run.rules`). Where m·δ is small the rules are tested jointly
instead (`one_run.joint`), which spends all of β on their union.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.one_run.coupling import coupling_epsilon
from dpaudit.audit.estimators.one_run.joint import joint_draws, joint_epsilon
from dpaudit.audit.estimators.one_run.rules import (
    GAME_REQUIREMENT,
    Guesses,
    Rules,
    best_of_guesses,
    check_rules,
    make_guesses,
    rank_truth,
)
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_delta, check_probability_open

__all__ = ["largest_rejected", "one_run_epsilon", "one_run_lower_bound", "one_run_p_value", "rule_epsilon"]

CALIBRATIONS = ("auto", "joint", "bonferroni")


def one_run_p_value(*, canaries: int, guesses: int, correct: int, epsilon: float,
                    delta: float) -> float:
    """Return the p-value of "(ε, δ)-DP" after `correct` of `guesses` right among `canaries`.

    f(v) + 2mδ · max_{1≤i≤v} (f(v−i) − f(v)) / i with f(v) = P[Binomial(r,
    e^ε/(1+e^ε)) ≥ v] (Steinke, Nasr, Jagielski 2023), capped at 1; the max
    is taken over all i at once with vectorized binomial tails.
    """
    from scipy.special import expit
    from scipy.stats import binom

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
    from scipy.optimize import brentq

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
    their minimum does (see `one_run.coupling`). Only ε above `floor` is
    searched (0 is returned when none is rejected there): their p-value rises
    with ε, so it rejects above `floor` only if it rejects at `floor`.
    """
    counts = dict(canaries=canaries, guesses=guesses.guesses, correct=guesses.correct, delta=delta)
    level = guesses.beta
    rejects_floor = one_run_p_value(epsilon=floor, **counts) < level
    theorem = one_run_epsilon(beta=level, **counts) if rejects_floor else 0.0
    return max(theorem, coupling_epsilon(beta=level, sides=guesses.sides, above=max(theorem, floor), **counts))


def one_run_lower_bound(
    obs: Observations,
    *,
    delta: float,
    confidence: float = 0.95,
    guess_counts: Sequence[tuple[int, int]] | None = None,
    errors_allowed: Sequence[int] | None = None,
    calibration: str = "auto",
    rng: np.random.Generator | int,
) -> LowerBound:
    """Return the assumption-free one-run ε lower bound (Steinke, Nasr, Jagielski 2023).

    `guess_counts` lists the fixed (k+, k−) rules and `errors_allowed` the
    stopping rules (IN down the ranking until the (j+1)-th wrong guess), all
    fixed before the scores were seen; with both None the default rules of
    `one_run.rules.check_rules` are tried. `calibration` says how β =
    1 − confidence is shared among them:

    - "joint": one max-statistic Monte Carlo test of all rules at once
      (`one_run.joint`), exact at level β; it needs two rules or more, each
      canary guessed the same way by every rule, and m·δ small (δ costs it
      s·m(1 − p)δ/2 of β).
    - "bonferroni": each rule at its share of β (even, or as `check_rules`
      says for the defaults), its bound `rule_epsilon` (their theorem or the
      coupling bound of `one_run.coupling`, whichever rejects more), the
      best reported.
    - "auto" (default): "joint" where it applies (`one_run.joint.joint_draws`,
      decided from the rules, m, δ and β alone), else "bonferroni".

    With probability ≥ `confidence`, the mechanism is not (ε', δ)-DP with
    respect to one canary for any ε' < the returned ε, provided the truth was
    drawn as the game requires (each canary included independently with
    probability 1/2).

    Args:
        obs: the m canaries' scores and truth.
        delta, confidence: of the bound.
        guess_counts: the fixed (k+, k−) rules.
        errors_allowed: the stopping rules' j (see `one_run.rules`).
        calibration: "auto", "joint" or "bonferroni".
        rng: breaks ties among equal scores at random, and draws the joint test's simulated games
            (each from its own child stream: a generator seeded like the one that drew the game
            would otherwise reuse the game's draws).

    Returns:
        A `LowerBound` (method "one-run") with the most significant rule's
        guesses and correct ones, each rule's level (for "joint", the
        Bonferroni level it had in effect) and the calibration used.

    Raises:
        InvalidParameterError: for observations without both classes, bad
            guess counts, or "joint" where it does not apply.
    """
    owner = "one_run_lower_bound"
    delta = check_delta(delta, "delta", owner)
    beta = 1.0 - check_probability_open(confidence, "confidence", owner)
    obs.require_both_classes("The one-run estimator")
    rules = check_rules(guess_counts, errors_allowed, obs.size, owner)
    draws = _check_calibration(calibration, rules, canaries=obs.size, delta=delta, beta=beta)
    generator = np.random.default_rng(rng)
    ranked = rank_truth(obs, generator)
    if draws is None:
        best, epsilon = best_of_guesses(
            make_guesses(ranked, rules=rules, beta=beta),
            bound=lambda g, floor: rule_epsilon(g, canaries=obs.size, delta=delta, floor=floor),
        )
        levels, how = rules.details(beta), {"calibration": "bonferroni"}
    else:
        epsilon, best, scale = joint_epsilon(ranked, rules=rules, canaries=obs.size, delta=delta, beta=beta,
                                             draws=draws, rng=generator.spawn(1)[0])
        levels, how = rules.details(scale), {"calibration": "joint", "draws": draws}
    return LowerBound(
        epsilon=epsilon, confidence=confidence, method="one-run", delta=delta, trials=obs.size,
        details={"canaries": obs.size, **best.details(), **levels, **how, "game": GAME_REQUIREMENT},
        guesses=best.guesses, correct=best.correct,
    )


def _check_calibration(calibration: object, rules: Rules, *, canaries: int, delta: float, beta: float) -> int | None:
    """Return the joint test's number of draws, or None for Bonferroni; one sentence if "joint" cannot be had."""
    if calibration not in CALIBRATIONS:
        raise InvalidParameterError(
            f"The 'calibration' parameter of one_run_lower_bound must be one of {', '.join(CALIBRATIONS)}; "
            f"got {calibration!r} instead."
        )
    if calibration == "bonferroni":
        return None
    draws = joint_draws(rules, canaries=canaries, delta=delta, beta=beta)
    if draws is None and calibration == "joint":
        raise InvalidParameterError(
            "one_run_lower_bound cannot test these rules jointly: there is one rule only, some canary is guessed IN "
            "by one rule and OUT by another, or m·δ is too large against 1 − confidence (use calibration='bonferroni')."
        )
    return draws
