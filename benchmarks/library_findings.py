"""The measurements behind docs/libraries.md: python-dp's output grids and PipelineDP's keep rates.

1. python-dp Laplace and Gaussian (ε = 1, δ = 1e-5, sensitivity 1): for
   f(D) = 0 and f(D) = 1, the coarsest power of two that every released
   double is a multiple of, and how many outputs fall in (−1/2, 1/2) as odd
   multiples of 2^-54 (impossible for f(D) = 1 when the library's grid is
   coarser than the doubles' spacing: that is the Gaussian leak).
   Then the grid measured at several ε against the formulas
   2^⌈log2(b/2^40)⌉ (Laplace scale b) and 2^⌈log2(2σ/2^57)⌉ (Gaussian σ).
2. PipelineDP `select_partitions` (ε = 1, δ = 1e-3, truncated geometric):
   how often a partition of 1 and of 2 users is kept, with exact 95%
   Clopper–Pearson intervals, beside the strategy's own `probability_of_keep`.
3. Why a 10-user partition is dropped at ε = 1, δ = 1e-6 (issue 14): the
   keep probability at the ε/3 that the NaiveBudgetAccountant gives partition
   selection beside COUNT and SUM.

Run: python benchmarks/library_findings.py [DRAWS]   (DRAWS per setting, default 200,000)
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from dpaudit.mechanisms.registry import get_mechanism
from rich.console import Console
from rich.table import Table


def grid_exponent(values: np.ndarray) -> int:
    """Return the largest k such that every nonzero value is a multiple of 2^k."""
    nonzero = values[values != 0]
    k = 10
    while not np.all(np.mod(nonzero, 2.0**k) == 0):
        k -= 1
    return k


def odd_multiples_near_zero(values: np.ndarray) -> int:
    """Return how many values in (−1/2, 1/2) are odd multiples of 2^-54."""
    small = values[np.abs(values) < 0.5]
    return int(np.sum(np.mod(small, 2.0**-53) != 0))


def grids(draws: int) -> Table:
    from pydp.algorithms import numerical_mechanisms

    table = Table(title=f"python-dp 1.1.5: released doubles ({draws:,} draws each)")
    for column in ("mechanism", "f(D)", "every output a multiple of", "outputs in (−½, ½)", "odd multiples of 2⁻⁵⁴"):
        table.add_column(column, justify="left" if column == "mechanism" else "right")
    mechanisms = {"LaplaceMechanism(1, 1)": numerical_mechanisms.LaplaceMechanism(epsilon=1.0, sensitivity=1.0),
                  "GaussianMechanism(1, 1e-5, 1)": numerical_mechanisms.GaussianMechanism(
                      epsilon=1.0, delta=1e-5, sensitivity=1.0)}
    for label, mech in mechanisms.items():
        for value in (0.0, 1.0):
            out = np.array([mech.add_noise(value) for _ in range(draws)])
            table.add_row(label, f"{value:g}", f"2^{grid_exponent(out)}", f"{int(np.sum(np.abs(out) < 0.5)):,}",
                          f"{odd_multiples_near_zero(out):,}")
    return table


def grid_formulas(draws: int) -> Table:
    from pydp.algorithms import numerical_mechanisms

    table = Table(title=f"python-dp 1.1.5: grid exponent at f(D) = 0 ({draws:,} draws each)")
    for column in ("mechanism", "ε", "scale", "measured", "formula"):
        table.add_column(column, justify="left" if column == "mechanism" else "right")
    for eps in (0.1, 1.0, 4.0):
        lap = numerical_mechanisms.LaplaceMechanism(epsilon=eps, sensitivity=1.0)
        gauss = numerical_mechanisms.GaussianMechanism(epsilon=eps, delta=1e-5, sensitivity=1.0)
        for label, mech, scale, formula in (("Laplace", lap, lap.diversity, math.log2(lap.diversity / 2.0**40)),
                                            ("Gaussian δ=1e-5", gauss, gauss.std, math.log2(2 * gauss.std / 2.0**57))):
            out = np.array([mech.add_noise(0.0) for _ in range(draws)])
            table.add_row(label, f"{eps:g}", f"{scale:.6g}", f"2^{grid_exponent(out)}", f"2^{math.ceil(formula)}")
    return table


def keep_rates(draws: int) -> Table:
    from pydp.algorithms import partition_selection
    from statsmodels.stats.proportion import proportion_confint

    table = Table(title=f"PipelineDP 0.3.1 select_partitions, ε = 1, δ = 1e-3 ({draws:,} engine runs each)")
    for column in ("users", "kept", "rate", "95% interval", "probability_of_keep", "bound from (ε, δ)"):
        table.add_column(column, justify="right")
    strategy = partition_selection.create_partition_strategy("truncated_geometric", 1.0, 1e-3, 1)
    bounds = {1: 1e-3, 2: 1e-3 * (1 + math.e)}
    for users, name in ((1, "pipelinedp_partition_selection"), (2, "pipelinedp_partition_selection_two_users")):
        mech = get_mechanism(name)
        kept = int(mech.sample(mech.default_pair[1], draws, np.random.default_rng(0)).sum())
        low, high = proportion_confint(kept, draws, alpha=0.05, method="beta")
        table.add_row(str(users), f"{kept:,}", f"{kept / draws:.3e}", f"[{low:.3e}, {high:.3e}]",
                      f"{strategy.probability_of_keep(users):.3e}", f"{bounds[users]:.3e}")
    return table


def dropped_partition() -> str:
    from pydp.algorithms import partition_selection

    strategy = partition_selection.create_partition_strategy("truncated_geometric", 1.0 / 3, 1e-6, 1)
    return (f"aggregate with COUNT, SUM and private partitions at ε = 1, δ = 1e-6: selection gets ε/3; "
            f"P(keep a 10-user partition) = probability_of_keep(10) = {strategy.probability_of_keep(10):.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("draws", nargs="?", type=int, default=200_000, help="draws per setting (default 200,000)")
    draws = parser.parse_args().draws
    console = Console(width=130)
    console.print(grids(draws))
    console.print(grid_formulas(draws // 4))
    console.print(keep_rates(draws))
    console.print(dropped_partition())


if __name__ == "__main__":
    main()
