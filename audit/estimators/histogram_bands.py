"""Two-dataset audits of scalar outputs without a selection split: the best threshold, paid for by bands.

Every output estimates: the threshold test "x ≥ t" (or "x ≤ t") guessing D1
is chosen after all outputs are counted (`OutputHistogram`), and its rates
are bounded by the simultaneous bands of `bands.rate_band`, which hold at
every threshold at once. Which side of t D1 lies on is not known in advance,
so both orientations are tried, each with half of β = 1 − confidence
(union bound). Sound for i.i.d. outputs on each dataset (their numbers may
be random, as with Poisson chunk sizes: the bands hold given them).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from dpaudit.attacks.output_histogram import OutputHistogram
from dpaudit.audit.estimators.clopper_pearson import epsilon_objective
from dpaudit.audit.estimators.gdp import check_gdp_delta, gdp_result, mu_from_rates
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.thresholds import band_rate_bounds

__all__ = ["histogram_gdp_bound", "histogram_lower_bound"]

TESTS = {(True, False): "≥", (True, True): ">", (False, False): "≤", (False, True): "<"}
"""(`d1_high`, `strict`) → the comparison of the test "x ? t guesses D1"."""


def _best_test(hist: OutputHistogram, beta: float, objective: Callable[[np.ndarray, np.ndarray], np.ndarray]
               ) -> tuple[float, dict[str, Any]]:
    """Return (the best test's objective value, unclamped; its evidence), both orientations at β/2 each.

    Within an orientation the band bounds P0(x ≥ t) and P1(x < t) at every
    real t, hence also their limits P0(x > t) and P1(x ≤ t): the strict
    tests come free.
    """
    best_value, best = None, {}
    for (d1_high, strict), sign in TESTS.items():
        fp, fn = hist.error_counts(d1_high=d1_high, strict=strict)
        fpr, fnr = band_rate_bounds(fp, hist.n0, fn, hist.n1, beta / 2)
        values = np.asarray(objective(fpr, fnr))
        i = int(np.argmax(values))
        if best_value is None or values[i] > best_value:
            best_value = float(values[i])
            best = {"test": f"x {sign} {hist.grid[i]:.6g}", "threshold": float(hist.grid[i]), "fp": int(fp[i]),
                    "fn": int(fn[i]), "fpr_upper": float(fpr[i]), "fnr_upper": float(fnr[i])}
    return best_value, {**best, "held_out_d0": hist.n0, "held_out_d1": hist.n1, "interval": "bands",
                        "thresholds_tried": 4 * hist.grid.size}


def histogram_lower_bound(hist: OutputHistogram, *, delta: float, confidence: float) -> LowerBound:
    """Return the assumption-free ε of the best threshold test on `hist`, with probability ≥ `confidence`.

    Kairouz–Oh–Viswanath's ε at δ of the test's band upper bounds on FPR
    and FNR (β/4 per class and orientation); see the module docstring for
    why choosing the test after counting is sound.
    """
    value, details = _best_test(hist, 1.0 - confidence, lambda fpr, fnr: epsilon_objective(fpr, fnr, delta))
    return LowerBound(epsilon=max(value, 0.0), confidence=confidence, method="simultaneous-band", delta=delta,
                      trials=hist.n0 + hist.n1, fpr=details["fp"] / max(hist.n0, 1),
                      fnr=details["fn"] / max(hist.n1, 1), details=details, test=details["test"])


def histogram_gdp_bound(hist: OutputHistogram, *, delta: float, confidence: float) -> LowerBound:
    """Return the Gaussian-DP bound of the best threshold test on `hist` (μ assumption-free, ε under the assumption)."""
    delta = check_gdp_delta(delta, "histogram_gdp_bound")
    value, details = _best_test(hist, 1.0 - confidence, mu_from_rates)
    return gdp_result(max(value, 0.0), delta=delta, confidence=confidence, method="gdp", trials=hist.n0 + hist.n1,
                      fpr=details["fp"] / max(hist.n0, 1), fnr=details["fn"] / max(hist.n1, 1), details=details)
