"""Wrong one-way-marginal mechanisms: proofs that fail the way users' proofs fail.

Each releases the column means of n rows in {±1}^d (replace-one) with too
little noise for its claim. The event is what the noise really gives, so the
theory upper bound is the true ε; the claim is what the author believed.
Each docstring names a `dpaudit trace` command that flags it (certified ε
above the claim) in under 2 minutes on 2 cores. Sensitivities: one replaced
row moves every mean by 2/n, so ℓ1 2d/n, ℓ2 2√d/n, ℓ∞ 2/n (Steinke & Ullman,
arXiv 1501.06095, §1).
"""

from __future__ import annotations

import numpy as np
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.builtins.gaussian import analytic_sigma
from dpaudit.mechanisms.builtins.marginals import (
    check_marginals,
    gaussian_marginals_event,
    laplace_marginals_event,
    marginal_release,
)
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = ["marginals_exact", "marginals_gaussian_linf", "marginals_laplace_per_coordinate", "marginals_stale_rows"]


@register("marginals_gaussian_linf", expected="violation")
def marginals_gaussian_linf(*, epsilon: float = 1.0, delta: float = 1e-5, num_rows: int = 10, dim: int = 5) -> Mechanism:
    """BUGGY: Gaussian noise calibrated to the ℓ∞ sensitivity 2/n (equally, ℓ1/d) instead of the ℓ2 sensitivity 2√d/n.

    σ is √d times too small, so the true privacy is that of a Gaussian with
    noise multiplier σn/√d: ε grows like √d times the claim. Flagged by
    `dpaudit trace marginals_gaussian_linf --rows 100 --dim 1000 --runs 20000`.
    """
    eps, n, d = check_marginals("marginals_gaussian_linf", epsilon, num_rows, dim)
    dlt = check_real(delta, "delta", "marginals_gaussian_linf", low=0.0, high=1.0, low_open=True, high_open=True)
    sigma = analytic_sigma(eps, dlt, 2.0 / n)
    return marginal_release("marginals_gaussian_linf", eps, dlt, n, d, lambda size, rng: rng.normal(0.0, sigma, (size, d)),
                            gaussian_marginals_event(sigma, n, d), {"delta": dlt, "sigma": sigma},
                            "Gaussian marginals calibrated to the ℓ∞ sensitivity (true ε ≈ √d times the claim).")


@register("marginals_laplace_per_coordinate", expected="violation")
def marginals_laplace_per_coordinate(*, epsilon: float = 1.0, num_rows: int = 10, dim: int = 5) -> Mechanism:
    """BUGGY: Laplace(2/(nε)) on each mean, the per-coordinate sensitivity, instead of Laplace(2d/(nε)).

    Each coordinate is ε-DP, but one row moves all d of them: the release is
    dε-DP, not ε-DP. Flagged by
    `dpaudit trace marginals_laplace_per_coordinate --rows 100 --dim 100 --runs 20000`.
    """
    eps, n, d = check_marginals("marginals_laplace_per_coordinate", epsilon, num_rows, dim)
    scale = 2.0 / (n * eps)
    return marginal_release("marginals_laplace_per_coordinate", eps, 0.0, n, d,
                            lambda size, rng: rng.laplace(0.0, scale, (size, d)), laplace_marginals_event(scale, n, d),
                            {}, "Laplace marginals with per-coordinate noise (true ε = dε).")


@register("marginals_stale_rows", expected="violation")
def marginals_stale_rows(*, epsilon: float = 1.0, num_rows: int = 10, dim: int = 5, assumed_rows: int | None = None) -> Mechanism:
    """BUGGY: Laplace noise scaled for `assumed_rows` rows (default 10n) while the means are over n rows.

    The scale 2d/(n'ε) was computed for n' rows (say, before a filter), but
    one of the n rows released moves each mean by 2/n: the release is
    (n'/n)ε-DP. Flagged by
    `dpaudit trace marginals_stale_rows --rows 100 --dim 4 --runs 20000`.
    """
    eps, n, d = check_marginals("marginals_stale_rows", epsilon, num_rows, dim)
    assumed = 10 * n if assumed_rows is None else check_int(assumed_rows, "assumed_rows", "marginals_stale_rows")
    scale = 2.0 * d / (assumed * eps)
    return marginal_release("marginals_stale_rows", eps, 0.0, n, d,
                            lambda size, rng: rng.laplace(0.0, scale, (size, d)), laplace_marginals_event(scale, n, d),
                            {"assumed_rows": assumed},
                            f"Laplace marginals scaled for {assumed} rows, released on {n} (true ε = {assumed / n:g}ε).")


@register("marginals_exact", expected="violation")
def marginals_exact(*, epsilon: float = 1.0, num_rows: int = 10, dim: int = 5) -> Mechanism:
    """BUGGY: the exact column means, claimed ε-DP (no noise at all: not DP for any ε).

    Flagged by `dpaudit trace marginals_exact --rows 100 --dim 100 --runs 2000`.
    """
    from dp_accounting import dp_event

    eps, n, d = check_marginals("marginals_exact", epsilon, num_rows, dim)
    return marginal_release("marginals_exact", eps, 0.0, n, d, lambda size, rng: np.zeros((size, d)),
                            dp_event.NonPrivateDpEvent(), {}, "Exact one-way marginals claimed private.")
