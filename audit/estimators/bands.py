"""Simultaneous upper confidence bounds on a rate at every threshold at once (one-sided, exact).

The threshold estimators need, for the test "guess IN when score ≥ t", an
upper bound on FPR(t) = P0(score ≥ t) from the count fp(t) of OUT scores ≥ t,
and on FNR(t) = P1(score < t) from the count fn(t) of IN scores < t. A band
that holds for every t at once lets the threshold be chosen after seeing all
the scores, with no split and no union bound over candidates.

The band here is the one-sided equal-local-level band of Berk and Jones
(1979) in the exact form of Moscovich, Nadler and Spiegelman ("On the exact
Berk–Jones statistics and their p-value calculation", EJS 2016), the one-sided
relative of the tail-sensitive bands of Aldor-Noiman et al. (2013): every
order statistic gets a Beta quantile at a local level, the local levels are
scaled by one factor α, and α is calibrated exactly, for the sample size at
hand, so that all the constraints hold together with probability ≥ 1 − β.

Validity (one rate; the FNR case is the same applied to the IN scores
sorted upwards, with H(y) = P1(score < y) in place of G).
Let X_1..X_n be i.i.d. from any law P0 (atoms allowed), G(x) = P0(X > x),
and W_i = G(X_i). With Q the quantile function of P0 and U_i i.i.d.
uniform, X_i = Q(U_i) has law P0 and G(Q(u)) ≤ 1 − u, so W_i ≤ V_i := 1 − U_i,
uniform: W is coupled below a uniform sample, and so are its order
statistics, W_(j) ≤ V_(j). Let E be the event {V_(j) ≤ c_j for every
checkpoint j}; `band_coverage` computes a lower bound on P(E) exactly
(Poisson-process representation of uniform order statistics; truncations
only drop probability from E), and α is chosen so that it is ≥ 1 − β.
On E, take any t (even one chosen from the data) with k = fp(t) < n scores
≥ t: the (k+1)-th largest score x satisfies x < t, so FPR(t) = P0(X ≥ t) ≤
G(x) = W_(k+1) ≤ W_(j) ≤ V_(j) ≤ c_j for the first checkpoint j ≥ k + 1,
which is the value `rate_band(n, β)[k]`. Ties need no special care: the
count is exact and the bound is on P0(X ≥ t), so ties count against the
attacker. Hence P(every threshold's rate ≤ its band value) ≥ 1 − β, whatever
P0 is, for every finite n.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from pathlib import Path
from typing import Callable

import numpy as np
from dpaudit.validation import check_int, check_probability_open

__all__ = [
    "DENSE",
    "LEVELS_FILE",
    "RATIO",
    "band_coverage",
    "band_values",
    "calibrate_from_scratch",
    "calibrated_level",
    "checkpoints",
    "design_fingerprint",
    "local_levels",
    "rate_band",
]

DENSE = 100
"""Every order statistic up to this rank (from either end) is a checkpoint."""
RATIO = 1.01
"""Beyond it, checkpoint ranks grow geometrically by this ratio (a count is rounded up to the next)."""
SPREAD = 12.0
"""Counts further than this many standard deviations from their mean are dropped (conservative)."""
SAFETY = 1e-9
"""Coverage demanded above 1 − β, against floating-point rounding in the recursion."""
LEVELS_FILE = Path(__file__).with_name("band_levels.json")
"""Calibrated levels on a grid of sample sizes (written by `python -m dpaudit.audit.estimators.band_table`)."""


def checkpoints(n: int) -> np.ndarray:
    """Return the ranks j (1..n, ascending) whose order statistics the band constrains.

    Every rank within DENSE of either end, then ranks spaced by RATIO: the
    fewer the checkpoints, the larger the local level; rounding a count up
    to the next checkpoint costs at most 1% of it.
    """
    dist = set(range(1, min(DENSE, n) + 1))
    x = float(DENSE)
    while x < n:
        x *= RATIO
        dist.add(math.ceil(x))
    d = np.array(sorted(dist))
    ranks = np.unique(np.concatenate([d, n + 1 - d]))
    return ranks[(ranks >= 1) & (ranks <= n)]


def _local_weights(n: int, ranks: np.ndarray) -> np.ndarray:
    """Return the relative local level of each checkpoint (1 at the first rank).

    Fixed before any data, so any choice is valid; this one spends the
    failure probability where ε is decided. Few errors (ranks ≤ 3, then up to
    max(10, 5% of n)) are the denominator of KOV's ratio, where a bound's
    relative error moves ε most; the middle (rates up to 0.9) enters
    through 1 − rate, where an absolute error costs less; rates above 0.9
    almost never certify anything.
    """
    w = np.full(ranks.size, 0.01)
    w[ranks <= 0.9 * n] = 0.15
    w[ranks <= max(10.0, 0.05 * n)] = 0.3
    w[ranks <= 3] = 0.5
    w[ranks <= 1] = 1.0
    return w


def band_values(n: int, ranks: np.ndarray, alpha: float) -> np.ndarray:
    """Return c_j: the upper (α·w_j)-quantile of Beta(j, n − j + 1), the law of the j-th smallest of n uniforms.

    Made non-decreasing by a running minimum from the right, which changes
    no constraint's event: V_(i) ≤ V_(j) ≤ c_j for i < j.
    """
    from scipy.special import betaincinv

    values = betaincinv(ranks, n - ranks + 1, 1.0 - alpha * _local_weights(n, ranks))
    return np.minimum.accumulate(values[::-1])[::-1]


def band_coverage(n: int, ranks: np.ndarray, values: np.ndarray) -> float:
    """Return a lower bound on P(V_(j) ≤ values_j for every j in ranks), V_(j) uniform order statistics.

    Uniform order statistics are the points of a Poisson process of rate n
    on [0, 1] given N(1) = n, and V_(j) ≤ c ⇔ N(c) ≥ j. The joint law of
    N(c_1), N(c_2), ... is propagated through independent Poisson increments
    (a convolution per checkpoint), zeroing counts below each rank; counts
    beyond SPREAD standard deviations and the far tail of each increment are
    dropped, which only lowers the result.
    """
    from scipy.signal import convolve
    from scipy.stats import poisson

    lo = int(ranks[0])
    hi = _count_cap(n, values[0])
    prob = poisson.pmf(np.arange(lo, hi + 1), n * values[0])
    for rank, start, stop in zip(ranks[1:], values[:-1], values[1:]):
        mean = n * (stop - start)
        kernel = poisson.pmf(np.arange(math.ceil(mean + SPREAD * math.sqrt(mean) + SPREAD) + 1), mean)
        new_hi = _count_cap(n, stop)
        spread = convolve(prob, kernel)[int(rank) - lo: new_hi - lo + 1]
        lo, hi, prob = int(rank), new_hi, np.maximum(spread, 0.0)
    counts = np.arange(lo, hi + 1)
    joint = float(np.sum(prob * poisson.pmf(n - counts, n * (1.0 - values[-1]))))
    return joint / float(poisson.pmf(n, n))


def _count_cap(n: int, value: float) -> int:
    """Return the largest count N(value) kept: SPREAD binomial standard deviations above its mean, at most n."""
    return int(min(n, math.ceil(n * value + SPREAD * math.sqrt(n * value * (1.0 - value)) + SPREAD)))


@functools.lru_cache(maxsize=1024)
def calibrated_level(n: int, beta: float) -> float:
    """Return the scale α of the local levels such that the band holds with probability ≥ 1 − β (verified).

    First tries the tabulated level of the next tabulated size N ≥ n (a
    larger sample needs a smaller level, so it usually fits) and keeps it if
    `band_coverage` confirms it for n itself: one exact evaluation. Else
    solves coverage(α) = 1 − β on log α (brentq) and lowers α by 1% steps
    until `band_coverage` confirms it; coverage decreases as α grows.
    Either way the returned level is checked exactly at this n.
    """
    gap = _coverage_gap(n, beta)
    tabulated = _tabulated_level(n, beta)
    if tabulated is not None and gap(math.log(tabulated)) >= 0.0:
        return tabulated
    return calibrate_from_scratch(n, beta)


def _coverage_gap(n: int, beta: float) -> Callable[[float], float]:
    """Return log α ↦ (lower bound on the band's coverage at level α) − (1 − β): decreasing in α."""
    ranks = checkpoints(n)
    target = 1.0 - beta + SAFETY

    def gap(log_alpha: float) -> float:
        return band_coverage(n, ranks, band_values(n, ranks, math.exp(log_alpha))) - target

    return gap


def calibrate_from_scratch(n: int, beta: float) -> float:
    """Return a level α ≤ β within about 1% of the largest whose band holds w.p. ≥ 1 − β (verified exactly).

    brentq on log α, then 1% steps down until the coverage is confirmed.
    """
    from scipy.optimize import brentq

    gap = _coverage_gap(n, beta)
    low, high = math.log(beta) - 8.0, math.log(beta)
    if gap(high) >= 0.0:
        return beta
    while gap(low) < 0.0:
        low, high = low - 8.0, low
    log_alpha = brentq(gap, low, high, xtol=0.005)
    while gap(log_alpha) < 0.0:
        log_alpha -= 0.01
    return math.exp(log_alpha)


def design_fingerprint() -> str:
    """Return a digest of the band's design (checkpoints, weights, truncation); a table is used only if it matches."""
    parts = [DENSE, RATIO, SPREAD, SAFETY]
    for n in (7, 1000, 123_457):
        parts.append(_local_weights(n, checkpoints(n)).tolist())
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, list[list[float]]]:
    if not LEVELS_FILE.is_file():
        return {}
    data = json.loads(LEVELS_FILE.read_text())
    return data["levels"] if data.get("design") == design_fingerprint() else {}


def _tabulated_level(n: int, beta: float) -> float | None:
    """Return the table's level at the next size ≥ n for this β (to rounding; it is verified anyway), if any."""
    rows = next((r for key, r in _table().items() if math.isclose(float(key), beta, rel_tol=1e-9)), None)
    if not rows:
        return None
    sizes = [int(size) for size, _ in rows]
    index = int(np.searchsorted(sizes, n))
    return float(rows[index][1]) if index < len(rows) else None


def local_levels(n: int, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Return (checkpoint ranks, their local levels): P(V_(j) > c_j) for each rank j alone, calibrated for (n, β)."""
    ranks = checkpoints(n)
    return ranks, calibrated_level(n, beta) * _local_weights(n, ranks)


@functools.lru_cache(maxsize=256)
def _rate_band(n: int, beta: float) -> np.ndarray:
    ranks = checkpoints(n)
    values = band_values(n, ranks, calibrated_level(n, beta))
    upper = np.ones(n + 1)
    position = np.searchsorted(ranks, np.arange(1, n + 1))
    upper[:n] = values[position]
    upper.setflags(write=False)
    return upper


def rate_band(n: int, beta: float) -> np.ndarray:
    """Return u with u[k] an upper bound on a rate observed as k events of n, for every threshold at once.

    With probability ≥ 1 − beta over n i.i.d. scores from any law, every
    threshold t has P(score ≥ t) ≤ u[#scores ≥ t] (and, applied to the
    other class, P(score < t) ≤ u[#scores < t]); see the module docstring
    for the proof. u[n] = 1. Calibrated for this n exactly (not
    asymptotically) and cached; read-only.
    """
    n = check_int(n, "n", "rate_band")
    beta = check_probability_open(beta, "beta", "rate_band")
    return _rate_band(n, beta)
