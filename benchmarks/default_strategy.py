"""What the default threshold strategy costs: ε certified by each rule fixed before the game, on the same scores (issue 47).

The suite's membership targets (the canary targets of
`mechanisms/builtins/canary_targets.py`, at their default parameters, as
`dpaudit suite` plays them) are audited by `audit_canaries` at each number of
runs and seed, and the scores that audit kept are certified again
(`recertify`, which pays for the two score directions as the audit does)
under every rule: each strategy alone at all of β, and `BestOf` the
dominating pair and the simultaneous bands at several shares of β. Every
rule certifies the same scores, so the columns differ only by the rule
(the audit itself certifies with a split, the cheapest, and is not shown).

Per target and number of runs: the mean ε over seeds and its standard
deviation. Then per rule: its shortfall against the best single strategy at
all of β in each cell (the strategy one would pick knowing the law in
advance; relative to that strategy's mean ε), the worst cell and the mean.
A size gets min(seeds, max(2, draws / runs)) seeds, so each size costs at
most about `draws` scores per target.

Run: python benchmarks/default_strategy.py --runs 1000 10000 100000    (3 seeds: 26 minutes under a load of 13 on 2 cores)
     python benchmarks/default_strategy.py --runs 1000000               (2 seeds: the 10⁹ draws of each vector target dominate)
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import numpy as np

TARGETS = ("canary_gaussian_sum", "canary_laplace_sum", "canary_histogram", "canary_mean",
           "canary_laplace_sum_l2_clip", "canary_mean_noise_divided_twice")
SKIPPED = ("canary_mean",)
"""Played only when named: its scores are an increasing affine map of canary_gaussian_sum's (a mean is a sum
over n, with the noise scaled alike), so every rule certifies the same ε from them."""


def rules() -> dict[str, Callable[[int], Any]]:
    """Return the rules compared, by label: each maps the number of runs to a threshold strategy (fixed before the game)."""
    from dpaudit.audit.estimators.thresholds import BestOf, Bonferroni, DominatingPair, SimultaneousBands, Split

    pair, bands = (DominatingPair(), SimultaneousBands())
    table: dict[str, Callable[[int], Any]] = {
        "dominating pair": lambda runs: pair, "bands": lambda runs: bands,
        "split": lambda runs: Split(), "bonferroni": lambda runs: Bonferroni(),
    }
    for share in (0.5, 0.9, 0.95):
        table[f"best of {share:g}·{1 - share:.2g}"] = lambda runs, w=share: BestOf((pair, bands), (w, 1 - w))
    return table


ALONE = ("dominating pair", "bands", "split", "bonferroni")


def certified(name: str, runs: int, seed: int, named: dict[str, Callable[[int], Any]]) -> dict[str, float]:
    """Return ε by rule for one canary audit of `name` with `runs` runs (played once, its scores certified by each rule)."""
    from dpaudit.attacks.games import MultiRun
    from dpaudit.audit import recertify
    from dpaudit.audit.audits.canaries import audit_canaries
    from dpaudit.audit.estimators.certify import Bound
    from dpaudit.audit.estimators.thresholds import Split
    from dpaudit.mechanisms import get_mechanism

    result = audit_canaries(get_mechanism(name), game=MultiRun(runs), bound=Bound(strategy=Split()), seed=seed)
    return {label: recertify(result, Bound(strategy=rule(runs))).lower_bound.epsilon for label, rule in named.items()}


def measure(targets: list[str], sizes: list[int], seeds: int, draws: int) -> dict[tuple[str, int], dict[str, np.ndarray]]:
    """Return, per (target, runs), each rule's ε over the seeds played."""
    named, cells = rules(), {}
    for runs in sizes:
        played = range(min(seeds, max(2, draws // runs)))
        for name in targets:
            start = time.perf_counter()
            rows = [certified(name, runs, seed, named) for seed in played]
            cells[(name, runs)] = {label: np.array([r[label] for r in rows]) for label in rows[0]}
            print(f"{name} at {runs:,} runs: {len(rows)} seeds in {time.perf_counter() - start:.0f} s", flush=True)
    return cells


def shortfalls(cells: dict[tuple[str, int], dict[str, np.ndarray]]) -> dict[str, list[float]]:
    """Return, per rule, its relative shortfall in each cell against the best strategy alone (cells where that is > 0)."""
    losses: dict[str, list[float]] = {}
    for values in cells.values():
        best = max(float(values[label].mean()) for label in ALONE)
        if best <= 0.0:
            continue
        for label, eps in values.items():
            losses.setdefault(label, []).append((best - float(eps.mean())) / best)
    return losses


def print_tables(cells: dict[tuple[str, int], dict[str, np.ndarray]], confidence: float) -> None:
    """Print the ε table (mean ± sd over seeds) and the shortfall of each rule."""
    from rich.console import Console
    from rich.table import Table

    labels = list(next(iter(cells.values())))
    table = Table(title=f"Certified ε at confidence {confidence:g}: mean ± sd over seeds, same scores for every rule")
    for column in ["target", "runs", "seeds", *labels]:
        table.add_column(column, justify="right")
    for (name, runs), values in cells.items():
        table.add_row(name, f"{runs:,}", str(len(values["dominating pair"])),
                      *(f"{v.mean():.3f} ± {v.std(ddof=1):.3f}" for v in values.values()))
    summary = Table(title="Shortfall against the best strategy alone at all of β (relative to its mean ε, per cell)")
    for column in ["rule", "worst cell", "mean", "cells"]:
        summary.add_column(column, justify="right")
    for label, losses in shortfalls(cells).items():
        summary.add_row(label, f"{max(losses):.1%}", f"{np.mean(losses):.1%}", str(len(losses)))
    console = Console(width=400)
    console.print(table)
    console.print(summary)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0, 1, … per size (fewer at large sizes: --draws)")
    parser.add_argument("--draws", type=int, default=2_000_000, help="at most about this many runs per target and size")
    parser.add_argument("--targets", nargs="+", default=[t for t in TARGETS if t not in SKIPPED], choices=TARGETS)
    args = parser.parse_args()
    start = time.perf_counter()
    cells = measure(args.targets, args.runs, args.seeds, args.draws)
    print_tables(cells, confidence=0.95)
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
