"""How the test-selection level trades tail thresholds against selection noise.

`audit.two_dataset.SELECTION_LEVEL` is the one-sided level of the
Clopper–Pearson bounds that replace the selection counts when the test is
chosen. Too weak and far-tail thresholds win by luck (the winner's curse
among hundreds of candidates); too strong and the test stays in the bulk
where tight tail tests (Gaussian) are missed. This prints the mean and worst
certified ε over seeds for a few levels. Run: `python benchmarks/selection_level.py`.
"""

from __future__ import annotations

import numpy as np

import audit.two_dataset as two_dataset
from audit import audit_mechanism
from mechanisms import get_mechanism

LEVELS = (0.025, 0.005, 0.001)
CASES = (("laplace", 10**4), ("laplace", 10**6), ("laplace", 10**7), ("gaussian", 10**6),
         ("gaussian_classical_large_eps", 4 * 10**6))
SEEDS = range(6)


def main() -> None:
    """Print one row per level: mean (worst) certified ε for each case."""
    print("level    " + "  ".join(f"{name}@{n:.0e}" for name, n in CASES))
    for level in LEVELS:
        two_dataset.SELECTION_LEVEL = level
        cells = []
        for name, trials in CASES:
            bounds = [audit_mechanism(get_mechanism(name), trials=trials, seed=s).lower_bound.epsilon for s in SEEDS]
            cells.append(f"{np.mean(bounds):.4f} ({np.min(bounds):.4f})")
        print(f"{level:<8} " + "  ".join(cells))


if __name__ == "__main__":
    main()
