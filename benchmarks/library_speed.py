"""Microseconds per draw of every installed library adapter (OpenDP, python-dp, PipelineDP; others with --only).

Each mechanism draws DRAWS outputs on its default d0 in one `sample` call
(the call the audit makes); the least of REPEATS runs is kept, as the least
disturbed by load on a shared machine. The suite's per-mechanism budgets
(`suite_trials` of each adapter's `register`) follow from these numbers.

Run: python benchmarks/library_speed.py [DRAWS] [--only GLOB]
(e.g. --only 'tumult_analytics_*': those in their own environments, whose
first draw also starts the shared process and Spark; the least of the
repeats leaves that start out).
"""

from __future__ import annotations

import argparse
import fnmatch
import time

import numpy as np
from dpaudit.mechanisms.registry import get_mechanism, list_mechanisms, registration
from rich.console import Console
from rich.table import Table

PREFIXES = ("opendp_", "pydp_", "pipelinedp_")
REPEATS = 3


def micros_per_draw(name: str, draws: int) -> float:
    """Return the least over REPEATS of the wall µs per output of `name` on its default d0."""
    mech = get_mechanism(name)
    d0 = mech.default_pair[0]
    best = float("inf")
    for seed in range(REPEATS):
        start = time.perf_counter()
        mech.sample(d0, draws, np.random.default_rng(seed))
        best = min(best, time.perf_counter() - start)
    return best / draws * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("draws", nargs="?", type=int, default=20_000, help="draws per mechanism (default 20,000)")
    parser.add_argument("--only", help="a glob of mechanism names instead of the OpenDP, python-dp and PipelineDP adapters")
    args = parser.parse_args()
    draws = args.draws
    names = [n for n in list_mechanisms() if (fnmatch.fnmatch(n, args.only) if args.only else n.startswith(PREFIXES))]
    table = Table(title=f"library adapters: µs per draw ({draws:,} draws, least of {REPEATS})")
    for column in ("mechanism", "µs per draw", "suite trials (quick)"):
        table.add_column(column, justify="left" if column == "mechanism" else "right")
    for name in names:
        trials = int(1_000_000 * registration(name).suite_trials)
        table.add_row(name, f"{micros_per_draw(name, draws):.1f}", f"{trials:,}")
    Console(width=100).print(table)


if __name__ == "__main__":
    main()
