"""Anytime-valid bounds on binomial proportions: beta-binomial mixture confidence sequences, and the ε they certify.

The construction (Robbins, "Statistical methods related to the law of the
iterated logarithm", Ann. Math. Statist. 1970; Howard, Ramdas, McAuliffe,
Sekhon, "Time-uniform, nonparametric, nonasymptotic confidence sequences",
Ann. Statist. 2021: their conjugate beta-binomial mixture, the
`BetaBinomialMixture` of the authors' `confseq` package, which is not used
here because it builds from C++ sources with Boost and has no release
since 2023). Let X₁, X₂, … be independent Bernoulli(p) and, after t draws,
k = X₁ + … + X_t. For a prior Beta(a, b) fixed before the draws,

    M_t(p) = ∫ q^k (1 − q)^(t − k) dBeta(a, b)(q) / (p^k (1 − p)^(t − k))
           = exp(ln B(a + k, b + t − k) − ln B(a, b) − k ln p − (t − k) ln(1 − p))

is a mixture of the likelihood ratios of Bernoulli(q) against Bernoulli(p).
Under Bernoulli(p) each ratio is a non-negative martingale with mean 1, so
their mixture is one too (Fubini), and Ville's inequality gives
P(∃ t: M_t(p) ≥ 1/α) ≤ α. So C_t = {p : M_t(p) < 1/α} holds the true p at
every t at once with probability ≥ 1 − α: at any stopping time, also one
chosen by looking at the C_t (or by a user watching them), and their
running intersection with it. ln M_t(p) is convex in p with its minimum at
p̂ = k/t, where M_t(p̂) ≤ 1 (the mixture of likelihoods is at most the
largest one), so C_t is an interval around p̂ and its ends are the two
roots of ln M_t(p) = ln(1/α), found by bracketing; the root returned is
moved outward until M_t ≥ 1/α holds in floating point, so rounding never
narrows the interval. Draws may arrive in batches whose sizes do not depend
on the draws of the batch (Poisson sizes, as the held-out phase draws
them): the martingale is then looked at after some of its steps only.

The prior only sets where the interval is narrowest: one centred on a
guess of p from other draws (the selection sample) with the concentration
Howard et al.'s normal-mixture rule gives for a target number of draws n
(prior variance p(1 − p)(2L + ln(1 + 2L))/n, L = ln(1/α)) is within about
1.6 times the fixed-n Wald width at n, and still valid before and after n.

Two rates at α = β/2 each bound ε by Kairouz, Oh and Viswanath's formula
(`clopper_pearson.epsilon_from_rates`) of their upper ends, decreasing in
both: with probability ≥ 1 − β (union bound) it is below the true ε at
every stopping time (`TwoRatesSequence`).
"""

from __future__ import annotations

import dataclasses
import math

from dpaudit.audit.estimators.clopper_pearson import epsilon_from_rates
from dpaudit.errors import InvalidParameterError

__all__ = ["BetaPrior", "RateSequence", "TwoRatesSequence", "fixed_level", "log_wealth", "mixture_interval"]

CENTER_FLOOR = 1e-9
"""The prior's centre is kept in [CENTER_FLOOR, 1 − CENTER_FLOOR]."""
MIN_CONCENTRATION = 2.0
"""The least a + b of a tuned prior (a wide prior when the target is a few draws)."""


@dataclasses.dataclass(frozen=True)
class BetaPrior:
    """The mixing distribution Beta(a, b) of a mixture confidence sequence; fixed before the draws it judges."""

    a: float = 0.5
    b: float = 0.5

    def __post_init__(self) -> None:
        if not (math.isfinite(self.a) and math.isfinite(self.b) and self.a > 0 and self.b > 0):
            raise InvalidParameterError(f"A Beta prior needs a > 0 and b > 0; got a={self.a!r}, b={self.b!r}.")

    @classmethod
    def tuned(cls, center: float, n: int, alpha: float) -> BetaPrior:
        """Return the prior centred on `center` whose interval is narrowest near `n` draws at level `alpha`.

        Its variance is center(1 − center)·(2L + ln(1 + 2L))/n with L = ln(1/α),
        the two-sided normal mixture's precision that minimises the boundary
        at n (Howard et al. 2021; `best_rho` in confseq, whose beta-binomial
        mixture takes the same a + b), in conjugate form: a + b + 1 = n/(2L + ln(1 + 2L)).
        """
        log_inv = math.log(1.0 / alpha)
        concentration = max(n / (2.0 * log_inv + math.log1p(2.0 * log_inv)) - 1.0, MIN_CONCENTRATION)
        c = min(max(float(center), CENTER_FLOOR), 1.0 - CENTER_FLOOR)
        return cls(concentration * c, concentration * (1.0 - c))


def fixed_level(alpha: float) -> float:
    """Return the level of a fixed-n one-sided interval as wide as a tuned mixture's at its target n (normal approximation).

    A tuned prior's boundary at its target is z·√(n p(1 − p)) with
    z² = (1 + 1/c)(ln(1 + c) + 2L), c = 2L + ln(1 + 2L), L = ln(1/α) (the
    two-sided normal mixture, Howard et al. 2021); this returns 1 − Φ(z),
    so that a test can be chosen for the interval it will be judged by.
    """
    from scipy.stats import norm

    log_inv = math.log(1.0 / alpha)
    c = 2.0 * log_inv + math.log1p(2.0 * log_inv)
    return float(norm.sf(math.sqrt((1.0 + 1.0 / c) * (math.log1p(c) + 2.0 * log_inv))))


def log_wealth(k: float, n: float, p: float, prior: BetaPrior) -> float:
    """Return ln M_n(p): the beta-binomial mixture martingale after `k` events in `n` draws, at the rate `p` tested.

    ∞ where p ∈ {0, 1} contradicts the draws (an event at p = 0, a non-event at p = 1).
    """
    from scipy.special import betaln

    if (p <= 0.0 and k > 0) or (p >= 1.0 and k < n):
        return math.inf
    terms = betaln(prior.a + k, prior.b + n - k) - betaln(prior.a, prior.b)
    if k > 0:
        terms -= k * math.log(p)
    if n - k > 0:
        terms -= (n - k) * math.log1p(-p)
    return float(terms)


def _root(k: float, n: float, alpha: float, prior: BetaPrior, inside: float, outside: float) -> float:
    """Return a point between `inside` (M < 1/α) and `outside` (M ≥ 1/α) where M ≥ 1/α, at the root up to rounding."""
    from scipy.optimize import brentq

    level = math.log(1.0 / alpha)

    def gap(p: float) -> float:
        return log_wealth(k, n, p, prior) - level

    if gap(outside) < 0.0:
        return outside
    width = abs(outside - inside)
    root = brentq(gap, inside, outside, xtol=width * 1e-13, rtol=1e-12, maxiter=500)
    step = width * 1e-13 + abs(root) * 1e-12
    while gap(root) < 0.0:
        root = min(max(root + math.copysign(step, outside - inside), min(inside, outside)), max(inside, outside))
        step *= 2.0
    return root


def mixture_interval(k: float, n: float, alpha: float, prior: BetaPrior) -> tuple[float, float]:
    """Return (lower, upper): the ends of the mixture confidence set {p : M_n(p) < 1/α} after `k` events in `n` draws.

    With probability ≥ 1 − α the true rate is inside at every n at once
    (module docstring); (0, 1) before any draw.
    """
    if n <= 0:
        return 0.0, 1.0
    center = k / n
    upper = 1.0 if k >= n else _root(k, n, alpha, prior, center, 1.0)
    lower = 0.0 if k <= 0 else _root(k, n, alpha, prior, center, 0.0)
    return lower, upper


@dataclasses.dataclass(frozen=True)
class RateSequence:
    """A confidence sequence for one binomial rate: its prior and level, the draws so far, and the running ends.

    `upper` and `lower` are the running intersection of every interval seen
    (all hold at once with probability ≥ 1 − `alpha`, so their intersection
    does too); `add` returns the sequence after a batch of draws.
    """

    prior: BetaPrior
    alpha: float
    events: int = 0
    draws: int = 0
    lower: float = 0.0
    upper: float = 1.0

    def add(self, events: int, draws: int) -> RateSequence:
        """Return the sequence after `events` more events in `draws` more draws."""
        k, n = self.events + int(events), self.draws + int(draws)
        low, high = mixture_interval(k, n, self.alpha, self.prior)
        return dataclasses.replace(self, events=k, draws=n, lower=max(self.lower, low), upper=min(self.upper, high))

    def upper_at(self, rate: float, draws: int) -> float:
        """Return the upper end this sequence would have after `draws` draws in all at the observed `rate`, to project."""
        return mixture_interval(rate * draws, draws, self.alpha, self.prior)[1]


@dataclasses.dataclass(frozen=True)
class TwoRatesSequence:
    """Confidence sequences for a fixed test's FPR (on D0) and FNR (on D1), β/2 each, and the ε they certify.

    `epsilon(delta)` holds below the true ε of every (ε, δ)-DP claim the
    mechanism keeps, at every stopping time, with probability ≥ 1 − β.
    """

    fpr: RateSequence
    fnr: RateSequence

    @classmethod
    def start(cls, beta: float, fpr_guess: float, fnr_guess: float, n: int) -> TwoRatesSequence:
        """Return the sequences before any draw, priors tuned to `n` draws per dataset around the two guesses."""
        alpha = beta / 2.0
        return cls(RateSequence(BetaPrior.tuned(fpr_guess, n, alpha), alpha),
                   RateSequence(BetaPrior.tuned(fnr_guess, n, alpha), alpha))

    def add(self, false_positives: int, n0: int, false_negatives: int, n1: int) -> TwoRatesSequence:
        """Return the sequences after a batch: `false_positives` of `n0` outputs on D0, `false_negatives` of `n1` on D1."""
        return TwoRatesSequence(self.fpr.add(false_positives, n0), self.fnr.add(false_negatives, n1))

    def epsilon(self, delta: float) -> float:
        """Return the anytime-valid ε lower bound at `delta` (0 when nothing is certified)."""
        return float(epsilon_from_rates(self.fpr.upper, self.fnr.upper, delta))

    def reachable(self, draws: int, delta: float) -> float:
        """Return the ε these sequences could certify after `draws` per dataset in all, were the rates at their lower ends.

        A rule for giving up: the lower ends are below the true rates at
        every time with the sequences' confidence, so a bound above this
        one is unlikely; stopping on it never harms validity.
        """
        return float(epsilon_from_rates(self.fpr.upper_at(self.fpr.lower, draws),
                                        self.fnr.upper_at(self.fnr.lower, draws), delta))
