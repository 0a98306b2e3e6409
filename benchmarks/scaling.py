"""Speed-up of a CPU-bound audit on a local Dask cluster of 1, 2 and 4 worker processes.

In each of `ROUNDS` rounds the Laplace audit runs in process, then on a
local cluster of each size in turn, through its scheduler address; each
cluster is started for its run alone (no idle cluster takes CPU from the
measured one; start-up times are printed apart) and warmed with a small
audit. The least time of each is kept (the least disturbed by other load on
the machine, whose speed drifts between minutes). Every run must give the same counts as in
process. Speed-up is the 1-worker time over the k-worker time (target ≥ 1.6×
with 2 workers on a machine with ≥ 2 free cores).

Run: python benchmarks/scaling.py
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time

from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.execution.backends import dask_client
from dpaudit.mechanisms.registry import get_mechanism
from rich.console import Console
from rich.table import Table

TRIALS = 50_000_000
SEED = 0
WORKERS = (1, 2, 4)
ROUNDS = 3


def timed(fn) -> tuple[float, object]:
    """Return (wall seconds, value) of one call of `fn`."""
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    load_before = os.getloadavg()[0]
    mech = get_mechanism("laplace", epsilon=1.0)
    audit_mechanism(mech, trials=10_000, seed=SEED)
    runs, starts = {k: [] for k in ("inline", *WORKERS)}, {k: [] for k in WORKERS}
    for _ in range(ROUNDS):
        runs["inline"].append(timed(lambda: audit_mechanism(mech, trials=TRIALS, seed=SEED)))
        for k in WORKERS:
            with contextlib.ExitStack() as stack:
                start, client = timed(lambda: stack.enter_context(dask_client(workers=k)))
                starts[k].append(start)
                address = client.scheduler.address
                audit_mechanism(mech, trials=10_000, seed=SEED, scheduler=address)
                runs[k].append(timed(lambda: audit_mechanism(mech, trials=TRIALS, seed=SEED, scheduler=address)))
    counts = runs["inline"][0][1].lower_bound.details
    best = {k: min(t for t, _ in v) for k, v in runs.items()}

    table = Table(title=f"Laplace audit, {TRIALS:,} trials per dataset, {os.cpu_count()} CPUs, seed {SEED}, best of {ROUNDS}")
    for column in ("backend", "cluster start (s)", "audit (s)", "speed-up vs 1 worker", "vs in process", "same counts"):
        table.add_column(column, justify="right")
    table.add_row("in process", "", f"{best['inline']:.2f}", "", "1.00", "")
    for k in WORKERS:
        same = all(r.lower_bound.details == counts for _, r in runs[k])
        table.add_row(
            f"{k} worker{'s' if k > 1 else ''}", f"{min(starts[k]):.1f}", f"{best[k]:.2f}",
            f"{best[1] / best[k]:.2f}", f"{best['inline'] / best[k]:.2f}", "yes" if same else "NO",
        )
    table.caption = (
        f"1-minute load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} CPUs; "
        "other processes' load takes cores from the workers."
    )
    Console(width=110).print(table)


if __name__ == "__main__":
    main()
