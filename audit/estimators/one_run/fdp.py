"""One-run f-DP auditing for μ-GDP (Mahloujifar, Melis, Chaudhuri).

"Auditing f-Differential Privacy in One Run", arXiv 2410.22235 (ICML 2025).
Same game as Steinke, Nasr, Jagielski (m canaries, each IN independently
with probability 1/2, one run, r guesses of which v are right), but the
probability of v or more correct guesses is bounded using the whole
trade-off curve f the mechanism is hypothesised to satisfy, not one (ε, δ)
pair. Under f-DP an event of probability x on one
neighbour has probability at most f̄(x) = 1 − f(x) on the other; for μ-GDP
the inverse of this blow-up is f̄⁻¹(y) = Φ(Φ⁻¹(y) − μ). Their recursion with
abstentions (k = 2 possible answers per canary) runs

    ρ_v = τ·v/m,  h_v = τ·(r − v)/m,
    for i = v−1, ..., 0:  h_i = max(h_{i+1}, f̄⁻¹(ρ_{i+1})),
                          ρ_i = ρ_{i+1} + i/(r − i) · (h_i − h_{i+1}),

and if ρ_0 + h_0 > r/m then P[W ≥ v] ≤ τ under f-DP: the hypothesis is
rejected at level τ. The recursion is sequential (each step needs the last),
so it is a plain loop with scalar normal-distribution functions.

What the result means: with confidence 1 − β the mechanism is not μ-GDP
(with respect to one canary) for any μ < μ_lower — a statement that needs no
assumption. The ε reported is that of μ_lower-GDP at δ, and bounds the
mechanism's (ε, δ) only if its trade-off curve is Gaussian (a member of the
μ-GDP family, as for Gaussian noise and DP-SGD).
"""

from __future__ import annotations

from statistics import NormalDist
from typing import Sequence

import numpy as np
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.gdp import check_gdp_delta, gdp_result
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.one_run.binomial import largest_rejected
from dpaudit.audit.estimators.one_run.rules import GAME_REQUIREMENT, Guesses, best_of_guesses, check_rules, make_guesses, rank_truth
from dpaudit.validation import check_probability_open

__all__ = ["gdp_excess", "one_run_fdp_lower_bound", "one_run_fdp_mu"]

_NORMAL = NormalDist()


def gdp_excess(*, canaries: int, guesses: int, correct: int, beta: float, mu: float) -> float:
    """Return ρ_0 + h_0 − r/m of the recursion for μ-GDP at level τ = beta (> 0: rejected).

    Positive: if the mechanism were μ-GDP with respect to each canary, `correct`
    or more right among `guesses` would have probability ≤ beta (Mahloujifar,
    Melis, Chaudhuri 2024). Stops early once ρ_i ≥ 1 (then ρ_0 + h_0 > r/m)
    or once h stops growing (then nothing changes any more).
    """
    rho = beta * correct / canaries
    h = beta * (guesses - correct) / canaries
    for i in range(correct - 1, -1, -1):
        if rho >= 1.0:
            break
        h_next = max(h, _NORMAL.cdf(_NORMAL.inv_cdf(rho) - mu))
        if h_next == h:
            break
        rho += i / (guesses - i) * (h_next - h)
        h = h_next
    return rho + h - guesses / canaries


def one_run_fdp_mu(*, canaries: int, guesses: int, correct: int, beta: float) -> float:
    """Return μ_lower: w.p. ≥ 1 − beta the mechanism is not μ-GDP for any μ < μ_lower.

    The largest μ the recursion rejects (rejection shrinks as μ grows:
    the inverse blow-up Φ(Φ⁻¹(x) − μ) decreases in μ).
    """
    return largest_rejected(
        lambda mu: gdp_excess(canaries=canaries, guesses=guesses, correct=correct, beta=beta,
                              mu=mu)
    )


def one_run_fdp_lower_bound(
    obs: Observations,
    *,
    delta: float,
    confidence: float = 0.95,
    guess_counts: Sequence[tuple[int, int]] | None = None,
    errors_allowed: Sequence[int] | None = None,
    rng: np.random.Generator | int,
) -> LowerBound:
    """Return the one-run f-DP bound on μ (Mahloujifar, Melis, Chaudhuri) and its ε at δ.

    `guess_counts` lists the fixed (k+, k−) rules and `errors_allowed` the
    stopping rules, all fixed before the scores were seen (`one_run.rules`);
    β = 1 − confidence is split evenly among them, or as
    `one_run.rules.check_rules` says for the default rules (both None). δ must be > 0 (the ε of μ-GDP at δ = 0 is infinite). With
    probability ≥ `confidence`, the mechanism is not μ-GDP for any μ <
    details['mu'] (no assumption); the ε is that of μ-GDP at `delta` and
    bounds the mechanism's ε only if its trade-off curve is Gaussian.
    Requires the game's truth: each canary IN independently with probability 1/2.

    Args:
        obs: the m canaries' scores and truth.
        delta: > 0; confidence: of the bound.
        guess_counts: the fixed (k+, k−) rules.
        errors_allowed: the stopping rules' j (see `one_run.rules`).
        rng: breaks ties among equal scores at random.

    Returns:
        A `LowerBound` (method "one-run-fdp") with μ in its details and the assumption named.

    Raises:
        InvalidParameterError: at δ = 0, or for observations without both classes.
    """
    owner = "one_run_fdp_lower_bound"
    delta = check_gdp_delta(delta, owner)
    beta = 1.0 - check_probability_open(confidence, "confidence", owner)
    obs.require_both_classes("The one-run f-DP estimator")
    rules = check_rules(guess_counts, errors_allowed, obs.size, owner)
    outcomes = make_guesses(rank_truth(obs, np.random.default_rng(rng)), rules=rules, beta=beta)

    def bound(g: Guesses, floor: float) -> float:
        kwargs = dict(canaries=obs.size, guesses=g.guesses, correct=g.correct, beta=g.beta)
        if floor > 0.0 and gdp_excess(mu=floor, **kwargs) <= 0.0:
            return 0.0
        return one_run_fdp_mu(**kwargs)

    best, mu = best_of_guesses(outcomes, bound=bound)
    return gdp_result(
        mu, delta=delta, confidence=confidence, method="one-run-fdp", trials=obs.size,
        details={"canaries": obs.size, **best.details(), **rules.details(beta), "calibration": "bonferroni",
                 "game": GAME_REQUIREMENT},
        guesses=best.guesses, correct=best.correct,
    )
