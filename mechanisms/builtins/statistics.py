"""Private statistics: clipped mean, a mean leaking its count, medians with local and inverse sensitivity.

Records are numbers; `nan` marks an absent record, so that add/remove pairs
keep one length (the mean under add/remove).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.builtins.private_selection import exponential_choice
from dpaudit.mechanisms.neighbours import NeighbourCheck, declare, in_domain, of_length, records_in
from dpaudit.mechanisms.records import NumberRecords
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = [
    "clipped_mean",
    "inverse_sensitivity_median",
    "local_sensitivity_of_median",
    "mean_noise_by_true_count",
    "median_distance",
    "median_local_sensitivity",
    "present_records",
]


def present_records(low: float, high: float) -> NeighbourCheck:
    """Return an add/remove check with `nan` as the absent record: one record added or removed, all in [low, high].

    Its domain (`domain_of`): numbers in [low, high], NaN the null record;
    ±inf, text and records of another shape are refused by name.
    """
    domain = NumberRecords(low, high)

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        outside = in_domain(domain, d0, d1, np.nan)
        if outside:
            return outside + " (NaN for an absent record)"
        d0, d1 = d0.astype(float).ravel(), d1.astype(float).ravel()
        changed = np.flatnonzero(~((d0 == d1) | (np.isnan(d0) & np.isnan(d1))))
        if len(changed) > 1:
            return f"they differ in {len(changed)} records, more than 1"
        if len(changed) == 1 and np.isnan(d0[changed[0]]) == np.isnan(d1[changed[0]]):
            return "the differing record must be present in one dataset and absent (nan) in the other"
        return None

    return declare(check, domain)


def local_sensitivity_of_median(sorted_rows: np.ndarray) -> float:
    """Return max(x_(k+1) − x_(k), x_(k) − x_(k−1)) of a sorted odd-length sample (median x_(k))."""
    k = len(sorted_rows) // 2
    above = sorted_rows[min(k + 1, len(sorted_rows) - 1)] - sorted_rows[k]
    return float(max(above, sorted_rows[k] - sorted_rows[max(k - 1, 0)]))


def median_distance(data: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Return, for each grid point t, how many records must change for the median of `data` to be t.

    With k = ⌈n/2⌉: len(t) = max(#{x < t} − (k − 1), k − #{x ≤ t}, 0).
    Changing one record changes it by at most 1 (Asi & Duchi, "Instance-optimal
    mechanisms with inverse sensitivity", NeurIPS 2020, §2).
    """
    x = np.sort(np.asarray(data, dtype=float))
    k = (len(x) + 1) // 2
    below = np.searchsorted(x, grid, side="left")
    at_most = np.searchsorted(x, grid, side="right")
    return np.maximum.reduce([below - (k - 1), k - at_most, np.zeros(len(grid), dtype=int)])


@register("clipped_mean", expected="consistent")
def clipped_mean(*, epsilon: float = 1.0, num_records: int = 10, low: float = 0.0, high: float = 1.0) -> Mechanism:
    """Return mean(clip(x, low, high)) + Laplace((high − low)/(nε)) for a public n: ε-DP (replace-one).

    Replacing one record moves the clipped mean by at most (high − low)/n
    (Dwork & Roth §3.3).
    """
    from dp_accounting import dp_event

    eps = check_real(epsilon, "epsilon", "clipped_mean", low=0.0, low_open=True)
    n = check_int(num_records, "num_records", "clipped_mean")
    lo = check_real(low, "low", "clipped_mean")
    hi = check_real(high, "high", "clipped_mean", low=lo, low_open=True)
    scale = (hi - lo) / (n * eps)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.mean(np.clip(data, lo, hi)) + rng.laplace(0.0, scale, size)

    d0 = np.full(n, lo)
    d1 = d0.copy()
    d1[0] = hi
    sensitivity = (hi - lo) / n
    return Mechanism(
        name="clipped_mean",
        sampler=sample,
        claim=Claim(eps, 0.0, Relation.REPLACE_ONE),
        # replace-one in dp_accounting's convention: sensitivity 2C, noise multiplier = scale / C.
        event=dp_event.LaplaceDpEvent(noise_multiplier=scale / (sensitivity / 2)),
        default_pair=(d0, d1),
        neighbours=of_length(n, records_in(-np.inf, np.inf)),
        params={"epsilon": eps, "num_records": n, "low": lo, "high": hi},
        description="Clipped mean with Laplace noise for a public record count.",
    )


@register("mean_noise_by_true_count", expected="violation")
def mean_noise_by_true_count(*, epsilon: float = 1.0, num_records: int = 2) -> Mechanism:
    """BUGGY: mean of the present records in [0, 1] + Laplace(1/(n ε)) with n the true, private count.

    Under add/remove the count is private, so the noise scale itself leaks
    it: on (0, absent) against (0, 0) the outputs are Laplace(1/ε) and
    Laplace(1/(2ε)), whose privacy loss is unbounded in the tails (true ε = ∞).
    """
    from dp_accounting import dp_event

    eps = check_real(epsilon, "epsilon", "mean_noise_by_true_count", low=0.0, low_open=True)
    n = check_int(num_records, "num_records", "mean_noise_by_true_count", low=2)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        present = np.asarray(data, dtype=float)
        present = present[~np.isnan(present)]
        count = max(len(present), 1)
        return np.sum(present) / count + rng.laplace(0.0, 1.0 / (count * eps), size)

    d1 = np.zeros(n)
    d0 = d1.copy()
    d0[1:] = np.nan
    return Mechanism(
        name="mean_noise_by_true_count",
        sampler=sample,
        claim=Claim(eps, 0.0),
        event=dp_event.NonPrivateDpEvent(),
        default_pair=(d0, d1),
        neighbours=present_records(0.0, 1.0),
        null_record=np.nan,
        params={"epsilon": eps, "num_records": n},
        description="Mean whose Laplace noise is scaled by the private count (true ε = ∞).",
    )


@register("median_local_sensitivity", expected="violation")
def median_local_sensitivity(*, epsilon: float = 1.0, num_records: int = 5) -> Mechanism:
    """BUGGY: median + Laplace(LS/ε) with LS the local sensitivity of the median at the data; true ε = ∞.

    Local sensitivity is not private (Nissim, Raskhodnikova, Smith, STOC 2007,
    §1): (0, 0, 0, 1, 1) has LS = 1, its neighbour (0, 0, 0, 0, 1) has LS = 0
    and releases the median exactly.
    """
    from dp_accounting import dp_event

    eps = check_real(epsilon, "epsilon", "median_local_sensitivity", low=0.0, low_open=True)
    n = check_int(num_records, "num_records", "median_local_sensitivity", low=3)
    if n % 2 == 0:
        n += 1

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        x = np.sort(np.asarray(data, dtype=float))
        return x[len(x) // 2] + rng.laplace(0.0, 1.0, size) * (local_sensitivity_of_median(x) / eps)

    d0 = np.zeros(n)
    d0[n // 2 + 1:] = 1.0
    d1 = d0.copy()
    d1[n // 2 + 1] = 0.0
    return Mechanism(
        name="median_local_sensitivity",
        sampler=sample,
        claim=Claim(eps, 0.0, Relation.REPLACE_ONE),
        event=dp_event.NonPrivateDpEvent(),
        default_pair=(d0, d1),
        neighbours=records_in(0.0, 1.0),
        params={"epsilon": eps, "num_records": n},
        description="Median with Laplace noise scaled to its local sensitivity (true ε = ∞).",
    )


@register("inverse_sensitivity_median", expected="consistent")
def inverse_sensitivity_median(*, epsilon: float = 1.0, num_records: int = 5, grid_size: int = 21) -> Mechanism:
    """Return a grid point t in [0, 1] with P(t) ∝ exp(−ε len(t)/2): ε-DP (replace-one).

    The inverse sensitivity mechanism (Asi & Duchi, NeurIPS 2020, §2): the
    exponential mechanism with utility −len(t), len of sensitivity 1.
    """
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps = check_real(epsilon, "epsilon", "inverse_sensitivity_median", low=0.0, low_open=True)
    n = check_int(num_records, "num_records", "inverse_sensitivity_median")
    g = check_int(grid_size, "grid_size", "inverse_sensitivity_median", low=2)
    grid = np.linspace(0.0, 1.0, g)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return grid[exponential_choice(-median_distance(data, grid), eps, size, rng)]

    d0 = np.zeros(n)
    d0[(n + 1) // 2:] = 1.0
    d1 = d0.copy()
    d1[(n - 1) // 2] = 1.0
    return Mechanism(
        name="inverse_sensitivity_median",
        sampler=sample,
        claim=Claim(eps, 0.0, Relation.REPLACE_ONE),
        event=EpsilonDeltaDpEvent(eps, 0.0),
        default_pair=(d0, d1),
        neighbours=records_in(0.0, 1.0),
        params={"epsilon": eps, "num_records": n, "grid_size": g},
        description="Inverse-sensitivity median on a grid of [0, 1].",
    )
