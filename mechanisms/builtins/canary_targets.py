"""Mechanisms on datasets of vectors or categories, the targets of canary games.

A dataset is an array with one record per row: a (n, d) float array of
vectors (any dimension d) or a 1-D array of integer categories. Under
add/remove the null record (a zero vector, category −1) stands for an absent
record in a neighbouring pair, so the pair keeps one length; a canary game
simply leaves absent canaries out.

- `canary_gaussian_sum`: records clipped to ℓ2 norm C, summed, N(0, σ²I) with
  σ the analytic calibration of Balle & Wang (ICML 2018, Thm 8) for Δ₂ = C.
- `canary_laplace_sum`: records clipped to ℓ1 norm C, summed, Laplace(C/ε)
  per coordinate (Dwork, McSherry, Nissim, Smith, TCC 2006).
- `canary_histogram`: counts of categories, Laplace(1/ε) per count (add/remove,
  Dwork & Roth §3.3).
- `canary_mean`: mean of n records clipped to ℓ2 norm C under replace-one
  (Δ₂ = 2C/n), analytic Gaussian noise.
Known-broken variants, each with a wrong claim: `canary_laplace_sum_l2_clip`
(ℓ2 clipping with ℓ1 noise) and `canary_mean_noise_divided_twice`.
"""

from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.builtins.gaussian import analytic_sigma
from dpaudit.mechanisms.neighbours import declare, in_domain, local
from dpaudit.mechanisms.records import CategoryRecords, VectorRecords
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = [
    "canary_gaussian_sum",
    "canary_histogram",
    "canary_laplace_sum",
    "canary_laplace_sum_l2_clip",
    "canary_mean",
    "canary_mean_noise_divided_twice",
    "clip_rows",
]

NULL_CATEGORY = -1
PAIR_RECORDS, PAIR_DIM = 10, 8
NeighbourCheck = Callable[[np.ndarray, np.ndarray], Optional[str]]


def clip_rows(records: np.ndarray, bound: float, order: float) -> np.ndarray:
    """Return the rows of `records` (n, d) scaled down to ℓ_order norm at most `bound`."""
    x = np.asarray(records, dtype=float)
    x = x.reshape(x.shape[0], int(np.prod(x.shape[1:])))
    norms = np.linalg.norm(x, ord=order, axis=1, keepdims=True)
    return x * np.minimum(1.0, bound / np.maximum(norms, 1e-300))


def _vector_records(relation: Relation) -> NeighbourCheck:
    """Return a check: 2-D numeric datasets differing in at most one row (add/remove: that row is zero in one)."""

    domain = VectorRecords()

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        outside = in_domain(domain, d0, d1)
        if outside:
            return outside + ", one record (vector) per row"
        changed = np.flatnonzero(np.any(d0 != d1, axis=1))
        if changed.size > 1:
            return f"they differ in {changed.size} records, more than 1"
        if changed.size and relation is Relation.ADD_REMOVE:
            row = changed[0]
            if np.any(d0[row]) and np.any(d1[row]):
                return "under add/remove the changed record must be the null record (zeros) in one of them"
        return None

    return declare(local(check), domain)


def _category_records(bins: int) -> NeighbourCheck:
    """Return a check: integer categories in [0, bins) or −1 (null), one record added or removed."""

    domain = CategoryRecords(bins)

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        outside = in_domain(domain, d0, d1, NULL_CATEGORY)
        if outside:
            return f"{outside}, or {NULL_CATEGORY} (absent)"
        changed = np.flatnonzero(d0 != d1)
        if changed.size > 1:
            return f"they differ in {changed.size} records, more than 1"
        if changed.size and NULL_CATEGORY not in (d0[changed[0]], d1[changed[0]]):
            return f"under add/remove the changed record must be {NULL_CATEGORY} (absent) in one of them"
        return None

    return declare(local(check), domain)


def _vector_pair(norm: float) -> tuple[np.ndarray, np.ndarray]:
    """Return a worst-case pair: 10 null records against one of them replaced by a ±norm/√8 vector."""
    d0 = np.zeros((PAIR_RECORDS, PAIR_DIM))
    d1 = d0.copy()
    d1[0] = norm * np.where(np.arange(PAIR_DIM) % 2 == 0, 1.0, -1.0) / math.sqrt(PAIR_DIM)
    return d0, d1


def _noisy_sum(clip: float, order: float, noise: Callable[[np.random.Generator, tuple[int, int]], np.ndarray]):
    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        total = clip_rows(np.asarray(data), clip, order).sum(axis=0)
        return total + noise(rng, (size, total.size))

    return sample


def _gaussian_check(owner: str, epsilon: float, delta: float, clip: float) -> tuple[float, float, float]:
    eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)
    dlt = check_real(delta, "delta", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    return eps, dlt, check_real(clip, "clip", owner, low=0.0, low_open=True)


def _laplace_check(owner: str, epsilon: float, clip: float) -> tuple[float, float]:
    eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)
    return eps, check_real(clip, "clip", owner, low=0.0, low_open=True)


@register("canary_gaussian_sum", expected="consistent")
def canary_gaussian_sum(*, epsilon: float = 1.0, delta: float = 1e-5, clip: float = 1.0) -> Mechanism:
    """Return the sum of records clipped to ℓ2 norm `clip`, plus N(0, σ²) per coordinate.

    σ is the analytic calibration for Δ₂ = clip (Balle & Wang, ICML 2018,
    Thm 8), so the mechanism is exactly (ε, δ)-DP under add/remove: true ε = claim.
    """
    from dp_accounting import dp_event

    eps, dlt, clip = _gaussian_check("canary_gaussian_sum", epsilon, delta, clip)
    sigma = analytic_sigma(eps, dlt, clip)
    return Mechanism(
        name="canary_gaussian_sum",
        sampler=_noisy_sum(clip, 2, lambda rng, shape: rng.normal(0.0, sigma, shape)),
        claim=Claim(eps, dlt),
        event=dp_event.GaussianDpEvent(noise_multiplier=sigma / clip),
        default_pair=_vector_pair(clip),
        neighbours=_vector_records(Relation.ADD_REMOVE),
        null_record=0.0,
        records=VectorRecords(norm=clip),
        params={"epsilon": eps, "delta": dlt, "clip": clip, "sigma": sigma},
        description=f"Sum of vectors clipped to ℓ2 norm {clip:g} + N(0, {sigma:.4g}²) per coordinate.",
    )


@register("canary_laplace_sum", expected="consistent")
def canary_laplace_sum(*, epsilon: float = 1.0, clip: float = 1.0) -> Mechanism:
    """Return the sum of records clipped to ℓ1 norm `clip`, plus Laplace(clip/ε) per coordinate.

    Δ₁ = clip under add/remove, so ε-DP (Dwork, McSherry, Nissim, Smith 2006); true ε = claim.
    """
    from dp_accounting import dp_event

    eps, clip = _laplace_check("canary_laplace_sum", epsilon, clip)
    scale = clip / eps
    return Mechanism(
        name="canary_laplace_sum",
        sampler=_noisy_sum(clip, 1, lambda rng, shape: rng.laplace(0.0, scale, shape)),
        claim=Claim(eps, 0.0),
        event=dp_event.LaplaceDpEvent(noise_multiplier=scale / clip),
        default_pair=_vector_pair(clip),
        neighbours=_vector_records(Relation.ADD_REMOVE),
        null_record=0.0,
        records=VectorRecords(norm=clip, order=1),
        params={"epsilon": eps, "clip": clip, "clip_norm": "l1"},
        description=f"Sum of vectors clipped to ℓ1 norm {clip:g} + Laplace({scale:.4g}) per coordinate.",
    )


@register("canary_laplace_sum_l2_clip", expected="violation")
def canary_laplace_sum_l2_clip(*, epsilon: float = 1.0, clip: float = 1.0) -> Mechanism:
    """BUGGY: records clipped to ℓ2 norm `clip` but Laplace(clip/ε) noise, calibrated as if to ℓ1.

    A record of ℓ2 norm C in dimension d has ℓ1 norm up to C√d, so the true
    ε is ε√d (unbounded in d; ε√8 ≈ 2.83ε on the default pair).
    """
    from dpaudit.mechanisms.events import BrokenClaimDpEvent

    eps, clip = _laplace_check("canary_laplace_sum_l2_clip", epsilon, clip)
    scale = clip / eps
    return Mechanism(
        name="canary_laplace_sum_l2_clip",
        sampler=_noisy_sum(clip, 2, lambda rng, shape: rng.laplace(0.0, scale, shape)),
        claim=Claim(eps, 0.0),
        default_pair=_vector_pair(clip),
        neighbours=_vector_records(Relation.ADD_REMOVE),
        null_record=0.0,
        records=VectorRecords(norm=clip),
        params={"epsilon": eps, "clip": clip},
        event=BrokenClaimDpEvent(),
        description="ℓ2 clipping with Laplace noise calibrated to ℓ1 sensitivity (true ε grows as √d).",
    )


@register("canary_histogram", expected="consistent")
def canary_histogram(*, epsilon: float = 1.0, bins: int = 16) -> Mechanism:
    """Return the counts of categories in [0, bins) + Laplace(1/ε) per count; records −1 are absent.

    Adding or removing one record changes one count by 1: ε-DP under add/remove
    (Dwork & Roth §3.3); true ε = claim. A one-run game with m canaries
    needs bins ≥ m (one bin per canary).
    """
    from dp_accounting import dp_event

    eps = check_real(epsilon, "epsilon", "canary_histogram", low=0.0, low_open=True)
    bins = check_int(bins, "bins", "canary_histogram", low=2)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        records = np.asarray(data, dtype=int).reshape(-1)
        counts = np.bincount(records[records != NULL_CATEGORY], minlength=bins).astype(float)
        return counts + rng.laplace(0.0, 1.0 / eps, (size, bins))

    d0 = np.full(PAIR_RECORDS, NULL_CATEGORY)
    d1 = d0.copy()
    d1[0] = 0
    return Mechanism(
        name="canary_histogram",
        sampler=sample,
        claim=Claim(eps, 0.0),
        event=dp_event.LaplaceDpEvent(noise_multiplier=1.0 / eps),
        default_pair=(d0, d1),
        neighbours=_category_records(bins),
        null_record=NULL_CATEGORY,
        records=CategoryRecords(bins),
        params={"epsilon": eps, "bins": bins},
        description=f"Histogram of {bins} categories + Laplace({1 / eps:.4g}) per count.",
    )


def _mean_mechanism(name: str, eps: float, dlt: float, clip: float, divide_twice: bool) -> Mechanism:
    # Replace-one on n records of norm ≤ C moves the mean by ≤ 2C/n; σ scales with it.
    from dp_accounting import dp_event
    from dpaudit.mechanisms.events import BrokenClaimDpEvent

    unit_sigma = analytic_sigma(eps, dlt, 2.0)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        records = clip_rows(np.asarray(data), clip, 2)
        n = max(len(records), 1)
        sigma = unit_sigma * clip / n / (n if divide_twice else 1)
        return records.sum(axis=0) / n + rng.normal(0.0, sigma, (size, records.shape[1]))

    return Mechanism(
        name=name,
        sampler=sample,
        claim=Claim(eps, dlt, Relation.REPLACE_ONE),
        event=BrokenClaimDpEvent() if divide_twice else dp_event.GaussianDpEvent(unit_sigma),
        default_pair=_vector_pair(clip),
        neighbours=_vector_records(Relation.REPLACE_ONE),
        records=VectorRecords(norm=clip),
        params={"epsilon": eps, "delta": dlt, "clip": clip},
        description=f"Mean of n vectors clipped to ℓ2 norm {clip:g} + Gaussian noise for Δ₂ = 2·{clip:g}/n"
        + (", then the noise divided by n again." if divide_twice else "."),
    )


@register("canary_mean", expected="consistent")
def canary_mean(*, epsilon: float = 1.0, delta: float = 1e-5, clip: float = 1.0) -> Mechanism:
    """Return the mean of the n records clipped to ℓ2 norm `clip` + N(0, σ²), σ analytic for Δ₂ = 2·clip/n.

    n is the dataset's own size (public, replace-one relation); exactly
    (ε, δ)-DP (Balle & Wang, ICML 2018, Thm 8); true ε = claim.
    """
    eps, dlt, clip = _gaussian_check("canary_mean", epsilon, delta, clip)
    return _mean_mechanism("canary_mean", eps, dlt, clip, False)


@register("canary_mean_noise_divided_twice", expected="violation")
def canary_mean_noise_divided_twice(*, epsilon: float = 1.0, delta: float = 1e-5, clip: float = 1.0) -> Mechanism:
    """BUGGY: the mean's noise σ (already for Δ₂ = 2C/n) is divided by n once more.

    The noise is n times too small, so the true μ-GDP parameter is n times
    the claimed one: on the 10-record default pair at (1, 1e-5), μ ≈ 2.7 and
    the true ε at δ = 1e-5 is about 14 (ε of μ-GDP, Dong, Roth, Su Cor. 2.13).
    """
    eps, dlt, clip = _gaussian_check("canary_mean_noise_divided_twice", epsilon, delta, clip)
    return _mean_mechanism("canary_mean_noise_divided_twice", eps, dlt, clip, True)
