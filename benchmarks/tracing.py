"""Time and peak memory of one-run tracing audits at n = 10⁴ rows and d = 10⁴ columns, each in a fresh process.

The data are a 10⁸-entry matrix of ±1 (int8: 100 MB) plus the candidate
rows and the fresh rows of the OUT slots; means and scores are computed in
blocks, never as one float64 copy of the matrix (800 MB). Peak resident
memory is `ru_maxrss` of the child process, imports included.

Run: python benchmarks/tracing.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from rich.console import Console
from rich.table import Table

ROWS = DIM = 10_000
MIB = 2**20
CASES = (("marginals_exact", "known"), ("marginals_gaussian", "known"), ("marginals_gaussian", "tardos"))

CHILD = """
import json, resource, sys, time
from dpaudit.attacks.games import OneRun
from dpaudit.audit.audits.tracing import audit_tracing
from dpaudit.mechanisms.registry import get_mechanism
name, score, rows, dim = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
start = time.perf_counter()
result = audit_tracing(get_mechanism(name, num_rows=rows, dim=dim), game=OneRun(None), scorer=score, seed=0)
print(json.dumps({"seconds": time.perf_counter() - start, "epsilon": result.lower_bound.epsilon,
                  "tpr": result.attack["tpr_at_1pct_fpr"],
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def measure(name: str, score: str) -> dict:
    """Return the child's audit seconds, certified ε, TPR at 1% FPR and peak RSS in bytes."""
    done = subprocess.run([sys.executable, "-c", CHILD, name, score, str(ROWS), str(DIM)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    table = Table(title=f"One-run tracing audit, n = {ROWS:,} rows, d = {DIM:,} columns, m = n slots (one process per row)")
    for column in ("mechanism", "score", "audit (s)", "certified ε", "TPR at 1% FPR", "peak RSS (MiB)"):
        table.add_column(column, justify="right")
    for name, score in CASES:
        row = measure(name, score)
        table.add_row(name, score, f"{row['seconds']:.1f}", f"{row['epsilon']:.3f}", f"{row['tpr']:.3f}",
                      f"{row['peak'] / MIB:.0f}")
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
