"""Peak memory of an inline Laplace audit at 10⁶, 10⁷ and 10⁸ trials per dataset, each in a fresh process.

Peak resident memory is `resource.getrusage(RUSAGE_SELF).ru_maxrss` of the
child process (imports included). Chunks are reduced to counts as they
finish, so the peak should not grow with trials; the last column is what
merely holding every output of both datasets as float64 would take.

Run: python benchmarks/memory.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from rich.console import Console
from rich.table import Table

TRIALS = (10**6, 10**7, 10**8)
MIB = 2**20
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import json, resource, sys, time
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.mechanisms.registry import get_mechanism
start = time.perf_counter()
result = audit_mechanism(get_mechanism("laplace"), trials=int(sys.argv[1]), seed=0)
print(json.dumps({"seconds": time.perf_counter() - start, "epsilon": result.lower_bound.epsilon,
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def measure(trials: int) -> dict:
    """Return the child's audit seconds, certified ε and peak RSS in bytes (Linux: ru_maxrss is in KiB)."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", CHILD, str(trials)], capture_output=True, text=True, env=env, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    table = Table(title="Peak memory of an inline Laplace audit (one process per row)")
    for column in ("trials per dataset", "audit (s)", "certified ε", "peak RSS (MiB)", "all outputs as float64 (MiB)"):
        table.add_column(column, justify="right")
    for trials in TRIALS:
        row = measure(trials)
        table.add_row(f"{trials:.0e}", f"{row['seconds']:.1f}", f"{row['epsilon']:.4f}", f"{row['peak'] / MIB:.0f}",
                      f"{2 * 8 * trials / MIB:,.0f}")
    Console(width=110).print(table)


if __name__ == "__main__":
    main()
