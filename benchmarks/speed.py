"""Speed and statistical efficiency of one Laplace audit, in one process and one run.

Prints (1) the audit's time for 10⁶ trials per dataset against the time numpy
needs to draw the same 2·10⁶ Laplace samples (median of 3 each, in this
process; issue 39: at most 2), with the time split into its phases, (2) the
certified ε against the best bound one fixed threshold with Clopper–Pearson
can give at the same N (REFERENCES §5: 0.994 at 10⁶), and (3) for five
built-ins the audit's time against the mechanism's own sampler drawing
10⁶ outputs on each dataset of its pair (issue 53: every ratio at most 2),
in wall seconds and in this process's CPU seconds, so a regression shows
in the table.

Run: python benchmarks/speed.py
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from dpaudit.attacks.distinguish import best_threshold, select_test
from dpaudit.attacks.held_out_counts import CountRejections
from dpaudit.attacks.output_scorers import Coordinate
from dpaudit.attacks.sampling import chunk_sizes, draw, per_chunk
from dpaudit.attacks.selection_budget import split_budget
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.estimators.clopper_pearson import epsilon_lower_bound
from dpaudit.audit.estimators.projection import projected_bound
from dpaudit.execution.runner import run_inline, seeds
from dpaudit.mechanisms.registry import get_mechanism
from rich.console import Console
from rich.table import Table

TRIALS = 1_000_000
SEED = 0
BETA = 0.05
REPEATS = 3
BUILTINS = ("laplace", "gaussian", "geometric", "randomized_response", "report_noisy_max")


def seconds(fn) -> tuple[float, object]:
    """Return (median wall seconds over REPEATS calls, last value) of `fn`."""
    wall, _, value = wall_and_cpu(fn)
    return wall, value


def wall_and_cpu(fn) -> tuple[float, float, object]:
    """Return (median wall seconds, median CPU seconds of this process, last value) of `fn` over REPEATS calls.

    CPU seconds leave out the time other jobs on the machine took the core, so their ratio moves less with the load.
    """
    walls, cpus, value = [], [], None
    for _ in range(REPEATS):
        start, start_cpu = time.perf_counter(), time.process_time()
        value = fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    return float(np.median(walls)), float(np.median(cpus)), value


def builtins_table() -> Table:
    """Return, per built-in of BUILTINS, the audit's median seconds at TRIALS against its sampler drawing TRIALS per dataset."""
    table = Table(title=f"Audit against raw sampling, {TRIALS:,} trials per dataset, median of {REPEATS}, seed {SEED}")
    for col in ("mechanism", "sampler: 2 × 10⁶ outputs (s)", "audit (s)", "ratio", "ratio of CPU s", "certified ε", "test"):
        table.add_column(col, justify="left" if col in ("mechanism", "test") else "right")
    for name in BUILTINS:
        mech = get_mechanism(name)
        d0, d1 = mech.default_pair
        audit_mechanism(mech, trials=10_000, seed=SEED)  # first calls, not timed
        rng = np.random.default_rng(SEED)
        t_raw, cpu_raw, _ = wall_and_cpu(lambda: (mech.sample(d0, TRIALS, rng), mech.sample(d1, TRIALS, rng)))
        t_audit, cpu_audit, result = wall_and_cpu(lambda: audit_mechanism(mech, trials=TRIALS, seed=SEED))
        table.add_row(name, f"{t_raw:.3f}", f"{t_audit:.3f}", f"{t_audit / t_raw:.2f}", f"{cpu_audit / cpu_raw:.2f}",
                      f"{result.lower_bound.epsilon:.4f}", result.test)
    return table


def best_one_threshold_bound(n: int, epsilon: float = 1.0) -> float:
    """Return max over thresholds t of the Clopper–Pearson ε bound of S = {x > t} from the exact rates.

    Laplace(0, 1/ε) on D0 against Laplace(1, 1/ε) on D1, n samples each.
    """
    from scipy import stats

    t = np.linspace(-2.0, 12.0, 20_001)
    fpr = stats.laplace.sf(t, loc=0.0, scale=1.0 / epsilon)
    fnr = stats.laplace.cdf(t, loc=1.0, scale=1.0 / epsilon)
    return float(np.max(epsilon_lower_bound(fpr * n, n, fnr * n, n, beta=BETA)))


def phases(mech, trials: int, seed: int) -> tuple[dict[str, float], float]:
    """Return the seconds of each phase of the audit flow, timed apart, and the bound of a value threshold.

    The last is the certified ε of the same flow with the test restricted to
    a threshold on the output value (chosen on the same selection half,
    counted on the same held-out chunks), the test §5's reference bound is for.
    """
    d0, d1 = mech.default_pair
    n_select, n_held = split_budget(trials)
    child = seeds(seed, 1)[0]
    t_draw, (out0, out1) = seconds(lambda: draw(mech, d0, d1, n_select, child))
    objective = projected_bound(n_held, 0.0, BETA)
    t_select, choice = seconds(lambda: select_test(out0, out1, objective=objective))
    sizes = chunk_sizes(n_held, per_chunk(1))
    chunk_seeds = seeds(seed, len(sizes))[1:]
    task = CountRejections(mech, d0, d1, choice.test, out0.shape[1:])
    t_held, _ = seconds(lambda: run_inline(task, sizes, chunk_seeds, seed=seed))
    rng = np.random.default_rng(seed)
    t_noise, _ = seconds(lambda: rng.laplace(0.0, 1.0, 2 * n_held))
    t_score, _ = seconds(lambda: choice.test.rejects(np.concatenate([out0, out1] * (n_held // n_select))))
    half = n_select // 2
    value = best_threshold(Coordinate(0, "value"), out0[half:], out1[half:], objective).test
    rejected0, rejected1, n0, n1 = run_inline(CountRejections(mech, d0, d1, value, out0.shape[1:]), sizes, chunk_seeds, seed=seed)
    value_bound = float(epsilon_lower_bound(rejected0, n0, n1 - rejected1, n1, beta=BETA))
    times = {
        "draw the selection sample": t_draw,
        f"choose the test: {choice.test.scorer.name}": t_select,
        "held-out chunks: draw, score, count": t_held,
        "  raw numpy noise for them": t_noise,
        "  scoring as many outputs": t_score,
    }
    return times, value_bound


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    mech = get_mechanism("laplace", epsilon=1.0)
    audit_mechanism(mech, trials=10_000, seed=SEED)  # imports and first calls, not timed
    rng = np.random.default_rng(SEED)
    t_numpy, _ = seconds(lambda: (rng.laplace(0.0, 1.0, TRIALS), rng.laplace(0.0, 1.0, TRIALS)))
    t_audit, result = seconds(lambda: audit_mechanism(mech, trials=TRIALS, seed=SEED))
    best = best_one_threshold_bound(TRIALS)
    best_held = best_one_threshold_bound(result.phases.held_out)

    table = Table(title=f"Laplace ε = 1, {TRIALS:,} trials per dataset, seed {SEED}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row(f"numpy: draw 2·10⁶ Laplace samples (s, median of {REPEATS})", f"{t_numpy:.3f}")
    table.add_row(f"dpaudit audit (s, median of {REPEATS})", f"{t_audit:.3f}")
    table.add_row("[bold]time ratio audit / numpy[/] (issue 39: ≤ 2)", f"[bold]{t_audit / t_numpy:.2f}[/]")
    table.add_row("trials per second (both datasets)", f"{2 * TRIALS / t_audit:,.0f}")
    times, value_bound = phases(mech, TRIALS, SEED)
    for name, value in times.items():
        table.add_row(f"phase: {name} (s)", f"{value:.3f}")
    table.add_row("certified ε lower bound (audit)", f"{result.lower_bound.epsilon:.4f}")
    table.add_row("  its test", result.test)
    table.add_row("certified ε, test restricted to a value threshold", f"{value_bound:.4f}")
    table.add_row("best one-threshold bound at N = 10⁶ (exact rates)", f"{best:.4f}")
    table.add_row("  the same at the held-out N", f"{best_held:.4f}")
    table.add_row("[bold]ratio audit / best one-threshold bound[/]", f"[bold]{result.lower_bound.epsilon / best:.4f}[/]")
    table.add_row("[bold]ratio value threshold / best one-threshold bound[/]", f"[bold]{value_bound / best:.4f}[/]")
    Console(width=110).print(table)
    Console(width=130).print(builtins_table())


if __name__ == "__main__":
    main()
