"""The best certified ε lower bound any fixed test can reach on n held-out samples, computed exactly.

For a pair (D0, D1) with output laws P0, P1 and a rejection set S, the
audit certifies ε̂(S) = log(r₋/(1 − r₋)), r₋ the Clopper–Pearson lower bound
at β on the share of S's Poisson counts that fall on the numerator's dataset
(`dpaudit.audit.estimators.rate_ratio`; Kairouz, Oh, Viswanath, ICML 2015). Here P0 and P1 are computed by
numerical integration, not sampled, and the counts are set to their
expectations n·P(S); the maximum over S is the bound a perfect attack would
typically certify at that n. A published bound above it needs more samples,
not a better attack.

- Sparse vector with cut-off c = 1 (Lyu, Su, Li, VLDB 2017, Algs 1, 2, 4):
  the output is the position of the first ⊤ (or none), an (m + 1)-point law;
  every one of the 2^(m+1) − 2 event sets is tried. Alg 2 redraws ρ only
  after a ⊤, so with c = 1 it has the law of Alg 1.
- Report-noisy-max returning the value, on all-equal answers shifted by one
  (and Laplace on its default pair): the likelihood ratio is monotone in the
  released value and the index is independent of it, so thresholds on the
  value are the Neyman–Pearson tests.

Run: python benchmarks/best_achievable.py [--held-out N] [--epsilon E] [--confidence C]
(imported by `discrete_selection.py` and `dpsniper_comparison.py`; run alone it prints the bounds
of the mechanisms it knows, with DP-Sniper's parameters).
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
from dpaudit.attacks.pair_search import split_patterns, statdp_patterns
from dpaudit.audit.estimators.rate_ratio import kov_ratio_bounds
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.registry import get_mechanism
from rich.console import Console
from rich.table import Table

GRID_POINTS = 50_001
TAIL_SCALES = 40.0
# The mechanisms computed here, with DP-Sniper's parameters (as in dpsniper_comparison.py).
CASES = (
    ("laplace", {}),
    ("noisy_max_with_value", {"num_queries": 5}),
    ("sparse_vector", {"threshold": 0.5}),
    ("sparse_vector_dwork_roth", {}),
    ("sparse_vector_lee_clifton", {}),
)
SVT_SCALES = {  # (threshold-noise scale, query-noise scale) in units of 1/ε at c = 1
    "sparse_vector": (2.0, 4.0),
    "sparse_vector_dwork_roth": (2.0, 4.0),
    "sparse_vector_lee_clifton": (4.0, 4.0 / 3.0),
}


def svt_first_above_law(answers: np.ndarray, *, threshold: float, rho_scale: float, nu_scale: float) -> np.ndarray:
    """Return P(first ⊤ at query k), k = 1 … m, then P(no ⊤), for SVT with c = 1 on `answers`.

    Integrates over the threshold noise ρ ~ Lap(rho_scale) on a grid of
    ±TAIL_SCALES scales (trapezoid rule); query noise ν_i ~ Lap(nu_scale),
    ⊤ when q_i + ν_i ≥ T + ρ (Lyu et al. Alg 1).
    """
    from scipy.stats import laplace

    rho = np.linspace(-TAIL_SCALES * rho_scale, TAIL_SCALES * rho_scale, GRID_POINTS)
    below = laplace.cdf(threshold + rho[:, None] - np.asarray(answers, dtype=float)[None, :], scale=nu_scale)
    before = np.cumprod(np.hstack([np.ones((len(rho), 1)), below]), axis=1)
    law = np.hstack([before[:, :-1] * (1.0 - below), before[:, -1:]])
    return np.trapezoid(law * laplace.pdf(rho, scale=rho_scale)[:, None], rho, axis=0)


def event_bound(a: np.ndarray, b: np.ndarray, *, n: int, beta: float) -> float:
    """Return the largest expected certified ε over events of probability a under D0 and b under D1.

    Each event is tried as the rejection set in both orientations (its
    complement is covered by the other one), with the held-out estimator of a
    pure-ε audit: one ratio interval at β for the direction fixed in advance
    (`dpaudit.audit.estimators.rate_ratio`), the counts set to their expectations.
    """
    forward = kov_ratio_bounds(n * a, n, n * (1.0 - b), n, beta)
    backward = kov_ratio_bounds(n * b, n, n * (1.0 - a), n, beta)
    return float(max(forward.max(), backward.max()))


def best_event_bound(p0: np.ndarray, p1: np.ndarray, *, n: int, beta: float) -> float:
    """Return the largest expected certified ε over all event sets of a finite law (probabilities p0, p1)."""
    sets = np.array(list(itertools.product((False, True), repeat=len(p0))), dtype=bool)[1:-1]
    return event_bound(sets @ p0, sets @ p1, n=n, beta=beta)


def svt_pair_bound(mech: Mechanism, pair: tuple[np.ndarray, np.ndarray], *, n: int, beta: float) -> float:
    """Return the exact best expected bound for sparse vector `mech` (c = 1) on `pair`."""
    eps, t = mech.params["epsilon"], mech.params["threshold"]
    rho_unit, nu_unit = SVT_SCALES[mech.name]
    laws = [svt_first_above_law(d, threshold=t, rho_scale=rho_unit / eps, nu_scale=nu_unit / eps) for d in pair]
    return best_event_bound(*laws, n=n, beta=beta)


def value_threshold_bound(cdf0, cdf1, scale: float, *, n: int, beta: float) -> float:
    """Return the best expected bound over events {X ≤ t}, t on a grid of ±TAIL_SCALES·scale; cdf_i(t) = P_i(X ≤ t)."""
    t = np.linspace(-TAIL_SCALES * scale, TAIL_SCALES * scale, GRID_POINTS)
    return event_bound(cdf0(t), cdf1(t), n=n, beta=beta)


def best_achievable(mech: Mechanism, *, n: int, beta: float, pair: tuple | None = None) -> tuple[float, float] | None:
    """Return (best on `pair`, default the mechanism's own, best over StatDP/DP-Sniper patterns) at n held-out samples, or None.

    None for mechanisms without an exact computation here. Sparse vector
    needs cut-off c = 1 (DP-Sniper's setting); its patterns are
    `statdp_patterns` and `split_patterns`. For report-noisy-max with value
    (default pair: equal answers, all shifted by one) and Laplace the
    released value is the whole evidence, and both entries are the
    default pair's.
    """
    from scipy.stats import laplace

    if mech.name in SVT_SCALES and mech.params.get("cutoff") == 1:
        m = mech.params["num_queries"]
        candidates = [pair for _, pair in statdp_patterns(m) + split_patterns(m)]
        default = svt_pair_bound(mech, mech.default_pair if pair is None else pair, n=n, beta=beta)
        return default, max([default] + [svt_pair_bound(mech, p, n=n, beta=beta) for p in candidates])
    if mech.name == "noisy_max_with_value":
        scale = 2.0 / mech.params["epsilon"]
        d0, d1 = mech.default_pair

        def max_cdf(answers: np.ndarray):
            return lambda t: np.prod(laplace.cdf(t[:, None] - answers[None, :], scale=scale), axis=1)

        bound = value_threshold_bound(max_cdf(d0), max_cdf(d1), scale, n=n, beta=beta)
        return bound, bound
    if mech.name == "laplace":
        scale = mech.params["sensitivity"] / mech.params["epsilon"]
        s0, s1 = (float(np.sum(d)) for d in mech.default_pair)
        bound = value_threshold_bound(lambda t: laplace.cdf(t - s0, scale=scale),
                                      lambda t: laplace.cdf(t - s1, scale=scale), scale, n=n, beta=beta)
        return bound, bound
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--held-out", type=int, default=5_000_000, help="held-out samples per dataset (default 5,000,000)")
    parser.add_argument("--epsilon", type=float, default=0.1, help="claimed ε of every mechanism (default 0.1)")
    parser.add_argument("--confidence", type=float, default=0.9, help="confidence of the bound (default 0.9, DP-Sniper's)")
    args = parser.parse_args()
    table = Table(title=f"Best expected certified ε of a fixed test, n = {args.held_out:,} held-out samples, "
                        f"confidence {args.confidence:g}")
    for column in ("mechanism", "default pair", "best pattern"):
        table.add_column(column, justify="left" if column == "mechanism" else "right")
    for name, params in CASES:
        bounds = best_achievable(get_mechanism(name, epsilon=args.epsilon, **params), n=args.held_out,
                                 beta=1.0 - args.confidence)
        table.add_row(name, *(f"{b:.3f}" for b in bounds))
    Console(width=100).print(table)


if __name__ == "__main__":
    main()
