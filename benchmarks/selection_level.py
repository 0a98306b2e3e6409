"""How the test-selection level trades tail thresholds against selection noise.

`dpaudit.attacks.selection_budget.SELECTION_LEVEL` is the one-sided level of the
Clopper–Pearson bounds that replace the selection counts when the test is
chosen. Too weak and far-tail thresholds win by luck (the winner's curse
among hundreds of candidates); too strong and the test stays in the bulk
where tight tail tests (Gaussian) are missed. This prints the mean and worst
certified ε over seeds for a few levels. For discrete outputs with K
categories the level is `discrete_level(K)` = min(1/2, c/K): few categories
leave little room for the winner's curse, and a weak level lets a rare
high-ratio category win. The second table varies c on sparse vector (11
categories), the geometric mechanism (≈ 240) and report-noisy-max (5), at
claimed ε = 0.1, 90%, with the pure-ε ratio interval (DP-Sniper's setting).
Run: `python benchmarks/selection_level.py [--discrete]`.
"""

from __future__ import annotations

import argparse

import dpaudit.attacks.selection_budget as selection
import numpy as np
from dpaudit.audit import audit_mechanism
from dpaudit.mechanisms import get_mechanism

LEVELS = (0.025, 0.005, 0.001)
CASES = (("laplace", 10**4), ("laplace", 10**6), ("laplace", 10**7), ("gaussian", 10**6),
         ("gaussian_classical_large_eps", 4 * 10**6))
SEEDS = range(6)
DISCRETE_MASSES = (0.5, 1.0, 5.0, 20.0)
DISCRETE_CASES = (("sparse_vector", {"epsilon": 0.1, "threshold": 0.5}, 10**7), ("geometric", {"epsilon": 0.1}, 10**6),
                  ("report_noisy_max", {"epsilon": 0.1, "num_queries": 5}, 10**6))
DISCRETE_SEEDS = range(4)


def continuous() -> None:
    """Print one row per level: mean (worst) certified ε for each case."""
    print("level    " + "  ".join(f"{name}@{n:.0e}" for name, n in CASES))
    for level in LEVELS:
        selection.SELECTION_LEVEL = level
        cells = []
        for name, trials in CASES:
            bounds = [audit_mechanism(get_mechanism(name), trials=trials, seed=s).lower_bound.epsilon for s in SEEDS]
            cells.append(f"{np.mean(bounds):.4f} ({np.min(bounds):.4f})")
        print(f"{level:<8} " + "  ".join(cells))


def discrete() -> None:
    """Print one row per discrete level: mean (worst) certified ε for each discrete case."""
    print("discrete c      " + "  ".join(f"{name}@{n:.0e}" for name, _, n in DISCRETE_CASES))
    for mass in DISCRETE_MASSES:
        selection.DISCRETE_LEVEL_MASS = mass
        cells = []
        for name, params, trials in DISCRETE_CASES:
            bounds = [audit_mechanism(get_mechanism(name, **params), trials=trials, seed=s, confidence=0.9,
                                      interval="ratio").lower_bound.epsilon for s in DISCRETE_SEEDS]
            cells.append(f"{np.mean(bounds):.4f} ({np.min(bounds):.4f})")
        print(f"{mass:<15} " + "  ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--discrete", action="store_true", help="only the discrete-output table")
    if not parser.parse_args().discrete:
        continuous()
    discrete()


if __name__ == "__main__":
    main()
