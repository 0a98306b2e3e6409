"""Outputs per second of a mechanism in another process (`dpaudit.mechanisms.external.processes`) against the same mechanism in process.

One mechanism, Laplace noise of scale 1 on the sum of the data, four ways:
the in-process black box (`blackbox` of docs/examples/other_env_mechanism.py's
function), that function run by another interpreter (this environment's
Python, as `external_python`) replying with .npy bytes and with JSON text,
and the awk program docs/examples/laplace.awk served by docs/examples/serve.sh.
For each: the start-up (the first draw of one output), the outputs per
second of `sample` in the audit's chunks (250 000 outputs), and the seconds
of one `audit_mechanism` at the same trial count. One run, one process;
the least time of --repeats runs.

Run: python benchmarks/external.py [--outputs 1000000] [--trials 200000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

CHUNK = 250_000  # outputs per chunk of scalar outputs in the audit (`per_chunk(1)`)
EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def example_function():
    """Return docs/examples/other_env_mechanism.py's `laplace_sum(data, size, seed)`, imported by path."""
    spec = importlib.util.spec_from_file_location("other_env_mechanism", EXAMPLES / "other_env_mechanism.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.laplace_sum


def mechanisms():
    """Return (label, mechanism) for the four ways of running the one mechanism."""
    from dpaudit.mechanisms import blackbox
    from dpaudit.mechanisms.external.processes import external, external_python, unit_sum_pair

    laplace_sum = example_function()

    def in_process(data, rng, size):
        return laplace_sum(data, size, int(rng.integers(2**31)))

    return [
        ("in process (blackbox)", blackbox(in_process, epsilon=1.0, default_pair=unit_sum_pair())),
        ("external Python, .npy replies", external_python(sys.executable, "other_env_mechanism:laplace_sum",
                                                          epsilon=1.0, path=[EXAMPLES])),
        ("external Python, JSON replies", external_python(sys.executable, "other_env_mechanism:laplace_sum",
                                                          epsilon=1.0, path=[EXAMPLES], binary=False)),
        ("awk (serve.sh + laplace.awk)", external(["sh", str(EXAMPLES / "serve.sh"), str(EXAMPLES / "laplace.awk"),
                                                   "-v", "epsilon=1"], epsilon=1.0)),
    ]


def least(fn, repeats):
    """Return the least wall seconds of `repeats` calls of `fn` (the least disturbed by other load)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def measure(mech, outputs, trials, repeats):
    """Return (seconds of the first one-output draw, outputs per second in the audit's chunks, seconds of one audit)."""
    from dpaudit.attacks.sampling import chunk_sizes, per_chunk
    from dpaudit.audit import audit_mechanism
    from dpaudit.mechanisms.external.processes import unit_sum_pair

    assert per_chunk(1) == CHUNK
    d0, d1 = unit_sum_pair()
    start = time.perf_counter()
    mech.sample(d1, 1, np.random.default_rng(0))
    startup = time.perf_counter() - start
    sizes = chunk_sizes(outputs, per_chunk(1))

    def draw():
        rng = np.random.default_rng(1)
        for size in sizes:
            mech.sample(d1, size, rng)

    rate = outputs / least(draw, repeats)
    audit = least(lambda: audit_mechanism(mech, d0, d1, trials=trials, seed=0), repeats)
    return startup, rate, audit


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=int, default=1_000_000, help="outputs drawn per measurement (default 10^6)")
    parser.add_argument("--trials", type=int, default=200_000, help="trials per dataset of the timed audit (default 2·10^5)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each measurement; the least time is kept (default 3)")
    args = parser.parse_args(argv)
    from dpaudit.audit import audit_mechanism
    from rich.console import Console
    from rich.table import Table

    rows, ways = [], mechanisms()
    audit_mechanism(ways[0][1], trials=1_000, seed=0)  # a warm-up: imports and first-call costs are no one's time
    for label, mech in ways:
        rows.append((label, *measure(mech, args.outputs, args.trials, args.repeats)))
        if hasattr(mech, "close"):
            mech.close()
    base_rate, base_audit = rows[0][2], rows[0][3]
    table = Table(title=f"Laplace on a sum: {args.outputs:,} outputs in chunks of {CHUNK:,}; "
                        f"audit at {args.trials:,} trials (least of {args.repeats})")
    for column in ("mechanism", "start-up (ms)", "outputs / s", "in-process / this", "audit (s)", "audit / in-process"):
        table.add_column(column, justify="left" if column == "mechanism" else "right")
    for label, startup, rate, audit in rows:
        table.add_row(label, f"{1000 * startup:.0f}", f"{rate:,.0f}", f"{base_rate / rate:.1f}",
                      f"{audit:.2f}", f"{audit / base_audit:.1f}")
    Console(width=120).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
