"""A lower bound from all the scores, calibrated on the privacy definition's dominating pair.

The band strategy bounds the two rates of the chosen threshold separately,
each with its own simultaneous band, and pays for the union. A bound on their
ratio fails only when the two errors pile up together, and a test of the
ratio needs far less room than two intervals (at equal counts about √2·z(β)
against 2·z(β/2)). This module tests the ratio over every threshold at once,
with no split and no union bound over thresholds, calibrated exactly on the
worst pair of score laws the privacy definition allows.

Setting. IN scores X_1..X_m ~ P and OUT scores Y_1..Y_n ~ Q, all independent.
Sort all m + n scores downwards, ties broken uniformly at random. A prefix
holds the first a IN and b OUT scores of that order. The statistic is

    T = max over prefixes of ψ(⌊a⌋, b),

where ⌊a⌋ rounds a down to a fixed checkpoint rank (`rank_checkpoints`) and
ψ(a, b) is what that prefix alone would certify at a nominal level (the
envelope's `certificate`: for (ε, δ)-DP the log-ratio of P to Q from one
Clopper–Pearson interval on a/(a + b), a net of the scores δ may place on
top; for μ-GDP the μ from the two rates):
nondecreasing in a, nonincreasing in b. ψ only shapes the test; the level
comes from the calibration below.

Null. A mechanism that is (ε, δ)-DP, or μ-GDP, bounds the power of every
test of Q against P at level s by an envelope R*(s):
R*(s) = min(1, δ + e^ε s, 1 − e^{−ε}(1 − δ − s)) (Kairouz, Oh, Viswanath,
ICML 2015), or R*(s) = Φ(Φ⁻¹(s) + μ) (Dong, Roth, Su, JRSS-B 2022).

Theorem. For every pair (P, Q) under the envelope, P(T ≥ c) ≤ P*(T ≥ c),
where under P* the IN scores are −V_i with V_i i.i.d. with CDF R* and the
OUT scores are −U_j with U_j i.i.d. uniform on (0, 1): the dominating pair.

Proof. Give every score a placement, its randomized OUT upper-tail
probability: U_j = Q(Y > Y_j) + ξ_j Q(Y = Y_j) and V_i = Q(Y > X_i) +
ξ_i Q(Y = X_i), ξ i.i.d. uniform. Then the U_j are i.i.d. uniform, and
P(V_i ≤ s) is the power of the randomized threshold test of level s, so the
V_i are i.i.d. with a CDF R ≤ R*. A larger score never has a larger
placement, and placements of an IN and an OUT score, or of two OUT scores,
are tied with probability 0, since each OUT placement is continuous and
independent of the rest; equal scores are ordered by ξ, uniformly at
random. So almost surely every prefix of the data is {placement ≤ v} for
some v (ties among IN placements do not change the counts), with
a(v) = #{V_i ≤ v}, b(v) = #{U_j ≤ v}. Couple V_i = R⁻(W_i)
and V*_i = R*⁻(W_i) with W_i uniform (R⁻ the quantile function): R ≤ R*
gives V*_i ≤ V_i, hence a*(v) ≥ a(v) at every v with the same b(v), and ψ
nondecreasing in a gives T* ≥ T. ∎

Calibration. Given the observed T, let β_k be the largest b with
ψ(c_k, b) ≥ T at checkpoint c_k. Under P*, T* ≥ T exactly when for some k
the c_k-th smallest V* has at most β_k uniforms below it, that is when
V*_(c_k) ≤ U_(β_k+1), i.e. W_(c_k) ≤ R*(U_(β_k+1)) (W, U uniform order
statistics). For a replicate of (W_(c_k), U_(β_k+1))_k, the set of null
parameters (ε or μ) at which it reaches T is [θ_r, ∞), with θ_r the least
parameter that makes R* reach some W_(c_k) at U_(β_k+1) (closed form). The
Monte Carlo p-value (1 + #{r : θ_r ≤ θ}) / (R + 1) of the null θ is valid
for every θ (Besag & Clifford, Biometrika 1989: the data's T is dominated
by the R i.i.d. replicates' T* at the true parameter), and it is
nondecreasing in θ; so the parameters it rejects at level β form [0, θ_lo)
with θ_lo the (⌊β(R + 1)⌋)-th smallest θ_r, and P(θ_lo > θ_true) ≤ β.
Order statistics at the checkpoint ranks are drawn from Gamma spacings, so
a replicate costs O(#checkpoints), whatever the number of scores.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Union

import numpy as np
from dpaudit.errors import InvalidParameterError

__all__ = [
    "DENSE",
    "MIN_REPLICATES",
    "RATIO",
    "ApproximateDP",
    "Envelope",
    "GaussianDP",
    "RankTest",
    "default_replicates",
    "prefix_counts",
    "rank_checkpoints",
    "rank_test",
    "uniform_order_statistics",
]

DENSE = 40
"""Every IN count up to this rank is a checkpoint."""
RATIO = 1.02
"""Beyond it, checkpoint ranks grow geometrically by this ratio (a count is rounded down to the previous)."""
EPSILON_LEVEL = 0.001
"""The level of the per-prefix interval in the (ε, δ) ψ; it sets the test's shape, not its validity."""
MU_LEVEL = 0.002
"""The same for the μ-GDP ψ. Both were chosen on `benchmarks/score_estimators.py`'s laws."""
EXCEEDANCES = 20
"""Replicates below the bound that the default count keeps at least: R = max(`MIN_REPLICATES`, 20/β)."""
MIN_REPLICATES = 4_000
"""The fewest Monte Carlo replicates of the dominating pair by default (β = 0.025: 4000, 100 below the bound)."""
CHUNK = 8_192
"""Replicates drawn at once, to keep memory flat at small β."""


def default_replicates(beta: float) -> int:
    """Return the default number of Monte Carlo replicates for a test at level β."""
    return max(MIN_REPLICATES, math.ceil(EXCEEDANCES / beta))


def _clopper_pearson_lower(count: np.ndarray, total: np.ndarray, level: float) -> np.ndarray:
    """Return the one-sided Clopper–Pearson lower bound of count/total at `level` (0 at count 0)."""
    from scipy.special import betaincinv

    return np.where(count > 0, betaincinv(np.maximum(count, 1), total - count + 1.0, level), 0.0)


@dataclasses.dataclass(frozen=True)
class ApproximateDP:
    """The (ε, δ)-DP envelope; the calibrated parameter is ε (Kairouz, Oh, Viswanath 2015)."""

    delta: float

    def certificate(self, a: np.ndarray, b: np.ndarray, n_high: int, n_low: int) -> np.ndarray:
        """Return ψ(a, b) = log(r/(1 − r)) + log(n_low/n_high), r the Clopper–Pearson lower bound of a'/(a' + b).

        a' = a − k_δ, with k_δ the (1 − `EPSILON_LEVEL`) quantile of
        Binomial(n_high, δ): the high scores that the δ of the envelope may
        place above every low score without any ε (0 at δ = 0). The
        log-ratio of the two classes' rates, net of δ, that a prefix holding
        `a` of `n_high` and `b` of `n_low` scores certifies alone at
        `EPSILON_LEVEL` (the conditional test of two Poisson rates); −inf
        when a' ≤ 0. Without the shift, the dominating pair's δ mass (about
        δ·n_high scores above all others) reaches any statistic that a
        short prefix sets, and the bound falls to 0 as n_high·δ grows.
        """
        net = np.maximum(np.asarray(a, dtype=float) - self._atoms(n_high), 0.0)
        lower = _clopper_pearson_lower(net, net + b, EPSILON_LEVEL)
        with np.errstate(divide="ignore"):
            return np.log(lower) - np.log1p(-lower) + math.log(n_low / n_high)

    def _atoms(self, n_high: int) -> float:
        """Return k_δ: the high scores the δ mass places on top, at its (1 − `EPSILON_LEVEL`) quantile."""
        if self.delta == 0.0:
            return 0.0
        from scipy.stats import binom

        return float(binom.ppf(1.0 - EPSILON_LEVEL, n_high, self.delta))

    def critical(self, w: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return the least ε ≥ 0 with R*_ε(u) ≥ w: both lines δ + e^ε u and 1 − e^{−ε}(1 − δ − u) reach w."""
        with np.errstate(divide="ignore", invalid="ignore"):
            rise = np.where(w > self.delta, np.log(w - self.delta) - np.log(u), -np.inf)
            room = 1.0 - self.delta - u
            fall = np.where(room > 0.0, np.log(room) - np.log1p(-w), -np.inf)
        return np.maximum(np.maximum(rise, fall), 0.0)


@dataclasses.dataclass(frozen=True)
class GaussianDP:
    """The μ-GDP envelope Φ(Φ⁻¹(s) + μ); the calibrated parameter is μ (Dong, Roth, Su 2022)."""

    @staticmethod
    def certificate(a: np.ndarray, b: np.ndarray, n_high: int, n_low: int) -> np.ndarray:
        """Return ψ(a, b) = Φ⁻¹(TPR₋) − Φ⁻¹(FPR₊), Clopper–Pearson bounds of a/n_high and b/n_low.

        The μ that a prefix certifies alone with each rate at `MU_LEVEL`
        (Nasr et al., USENIX Security 2023); −inf when a = 0 or b = n_low.
        """
        from scipy.special import ndtri

        fpr_upper = 1.0 - _clopper_pearson_lower(n_low - b, np.full_like(b, n_low), MU_LEVEL)
        return ndtri(_clopper_pearson_lower(a, np.full_like(a, n_high), MU_LEVEL)) - ndtri(fpr_upper)

    def critical(self, w: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return the least μ ≥ 0 with Φ(Φ⁻¹(u) + μ) ≥ w."""
        from scipy.special import ndtri

        return np.maximum(ndtri(w) - ndtri(u), 0.0)


Envelope = Union[ApproximateDP, GaussianDP]


@dataclasses.dataclass(frozen=True)
class RankTest:
    """The prefix where the statistic peaked and the certified parameter of one direction.

    `threshold` is the last score in the prefix: every higher score is in
    it, and so are the scores equal to it unless `splits_ties` (then a
    random part of them is, a randomized test). It holds `high_count` of the
    high class and `low_count` of the other.
    """

    value: float
    threshold: float
    high_count: int
    low_count: int
    splits_ties: bool
    replicates: int
    checkpoints: int


def rank_checkpoints(n: int) -> np.ndarray:
    """Return the checkpoint ranks 1..`DENSE`, then geometric by `RATIO` up to n."""
    dense = np.arange(1, min(DENSE, n) + 1)
    if n <= DENSE:
        return dense
    steps = math.ceil(math.log(n / DENSE) / math.log(RATIO))
    spread = np.round(np.geomspace(DENSE, n, steps + 1)).astype(int)
    return np.unique(np.concatenate([dense, spread]))


def prefix_counts(
    high: np.ndarray, low: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (a, b, t) for every prefix of the scores sorted downwards, ties broken uniformly at random.

    a and b count the `high` and `low` scores in the prefix; t is its last
    score. Random tie-breaking is the ξ of the module's proof, so every
    prefix counts, including those that split a group of tied scores.
    """
    scores = np.concatenate([high, low])
    order = np.lexsort((rng.random(scores.size), -scores))
    a = np.cumsum(order < high.size)
    return a, np.arange(1, scores.size + 1) - a, scores[order]


def uniform_order_statistics(rng: np.random.Generator, ranks: np.ndarray, n: int, replicates: int) -> np.ndarray:
    """Return (replicates, len(ranks)) draws of the order statistics at sorted `ranks` of n i.i.d. uniforms.

    The k-th of n uniform order statistics is S_k / S_{n+1}, with S the
    partial sums of n + 1 i.i.d. standard exponentials (Rényi); the sums
    between checkpoint ranks are Gamma variates, so a draw costs O(len(ranks)).
    """
    gaps = rng.standard_gamma(np.diff(np.concatenate([[0], ranks, [n + 1]])), size=(replicates, ranks.size + 1))
    sums = np.cumsum(gaps, axis=1)
    return sums[:, :-1] / sums[:, -1:]


def _largest_low_counts(
    envelope: Envelope, statistic: float, ranks: np.ndarray, n_high: int, n_low: int
) -> np.ndarray:
    """Return, per checkpoint rank c, the largest b in [−1, n_low] with ψ(c, b) ≥ `statistic` (−1: none)."""
    low, high = np.full(ranks.size, -1), np.full(ranks.size, n_low + 1)
    while np.any(high - low > 1):
        middle = (low + high) // 2
        reached = envelope.certificate(ranks, np.clip(middle, 0, n_low), n_high, n_low) >= statistic
        low, high = np.where(reached, middle, low), np.where(reached, high, middle)
    return low


def rank_test(
    high: np.ndarray, low: np.ndarray, *, envelope: Envelope, beta: float, replicates: int,
    rng: np.random.Generator,
) -> RankTest:
    """Return the parameter (ε or μ) certified at 1 − β that `high` scores come from the larger law.

    Sound by the module's theorem: when the `high` scores are i.i.d. from P
    and the `low` scores i.i.d. from Q, independently, and (P, Q) lies under
    `envelope` at θ, then P(value > θ) ≤ β. Needs ⌊β(R + 1)⌋ ≥ 1.
    """
    cut = math.floor(beta * (replicates + 1))
    if cut < 1:
        raise InvalidParameterError(
            f"A dominating-pair test at β = {beta:.3g} needs at least {math.ceil(1 / beta)} replicates; "
            f"got {replicates}."
        )
    a, b, thresholds = prefix_counts(high, low, rng)
    ranks = rank_checkpoints(high.size)
    first = np.searchsorted(a, ranks, side="left")
    values = envelope.certificate(ranks, b[first], high.size, low.size)
    peak = int(np.argmax(values))
    statistic = float(values[peak])
    counts = _largest_low_counts(envelope, statistic, ranks, high.size, low.size)
    at_peak = first[peak]
    splits = at_peak + 1 < thresholds.size and thresholds[at_peak + 1] == thresholds[at_peak]
    test = dict(threshold=float(thresholds[at_peak]), high_count=int(a[at_peak]), low_count=int(b[at_peak]),
                splits_ties=bool(splits), replicates=replicates, checkpoints=ranks.size)
    if statistic == -np.inf or counts.max() >= low.size:
        return RankTest(value=0.0, **test)
    reachable = counts >= 0
    critical = _critical_values(envelope, ranks[reachable], counts[reachable] + 1, high.size, low.size,
                                replicates, rng)
    return RankTest(value=float(np.partition(critical, cut - 1)[cut - 1]), **test)


def _critical_values(
    envelope: Envelope, high_ranks: np.ndarray, low_ranks: np.ndarray, n_high: int, n_low: int,
    replicates: int, rng: np.random.Generator,
) -> np.ndarray:
    """Return each replicate's least null parameter at which the dominating pair reaches the statistic.

    A replicate reaches it at θ when, for some checkpoint k, the
    `high_ranks[k]`-th high placement lies below the `low_ranks[k]`-th low one.
    """
    distinct, columns = np.unique(low_ranks, return_inverse=True)
    chunks = []
    for start in range(0, replicates, CHUNK):
        size = min(CHUNK, replicates - start)
        w = uniform_order_statistics(rng, high_ranks, n_high, size)
        u = uniform_order_statistics(rng, distinct, n_low, size)[:, columns]
        chunks.append(envelope.critical(w, u).min(axis=1))
    return np.concatenate(chunks)
