"""Sequential against fixed two-dataset audits, side by side in one run (issue 53).

Buggy rows (registered with expected="violation"): the trials per dataset
drawn until a violation is certified, median over seeds, by
`trials="sequential"` (stops at the first certified violation) and by
today's default (a fixed budget, which draws all of it), both with the
suite's budget for the row (10⁶ × its `suite_trials`); "missed" counts the
seeds where the budget certified nothing. Correct rows (expected
"consistent"): the mean bound at that full budget, sequential with
`give_up=False` (it runs to the budget) against fixed, and their ratio.
Built-in mechanisms only, unless --libraries (library adapters run in
their own environments).

Run: python benchmarks/sequential.py                    (3 seeds, built-ins: about 20 minutes)
     python benchmarks/sequential.py --only 'noisy_max*' --seeds 5
"""

from __future__ import annotations

import argparse
import fnmatch
import statistics
import time


def _rows(expected: str, only: str | None, libraries: bool) -> list[tuple[str, int]]:
    """Return (name, budget) of the registered mechanisms expected to give `expected`, as the suite sizes them."""
    from dpaudit.audit.audits.suite import TRIALS
    from dpaudit.mechanisms import list_mechanisms
    from dpaudit.mechanisms.registry import registration

    rows = []
    for name in list_mechanisms():
        reg = registration(name)
        library = reg.factory.__module__.startswith("dpaudit.mechanisms.adapters")
        if reg.expected == expected and (libraries or not library) and (only is None or fnmatch.fnmatch(name, only)):
            rows.append((name, int(TRIALS["quick"] * reg.suite_trials)))
    return rows


def _buggy(name: str, budget: int, seeds: int) -> str:
    """Return the table row of one buggy mechanism: draws to a certified violation, sequential and fixed."""
    from dpaudit.audit import audit_mechanism
    from dpaudit.audit.audits.auto_trials import AutoBudget
    from dpaudit.mechanisms import get_mechanism

    mech, drawn, missed, fixed_missed = get_mechanism(name), [], 0, 0
    for seed in range(seeds):
        res = audit_mechanism(mech, trials="sequential", seed=seed, budget=AutoBudget(max_trials=budget))
        if res.verdict == "violation":
            drawn.append(res.phases.sequential.trials_drawn)
        else:
            missed += 1
        fixed_missed += audit_mechanism(mech, trials=budget, seed=seed).verdict != "violation"
    median = f"{statistics.median(drawn):,.0f}" if drawn else "–"
    ratio = f"{statistics.median(drawn) / budget:.4f}" if drawn else "–"
    return f"| {name} | {budget:,} | {median} | {missed} | {budget:,} | {fixed_missed} | {ratio} |"


def _correct(name: str, budget: int, seeds: int) -> str:
    """Return the table row of one correct mechanism: the mean bound at the full budget, sequential and fixed."""
    from dpaudit.audit import audit_mechanism
    from dpaudit.audit.audits.auto_trials import AutoBudget
    from dpaudit.mechanisms import get_mechanism

    mech, sequential, fixed = get_mechanism(name), [], []
    for seed in range(seeds):
        res = audit_mechanism(mech, trials="sequential", seed=seed, budget=AutoBudget(max_trials=budget, give_up=False))
        sequential.append(res.lower_bound.epsilon)
        fixed.append(audit_mechanism(mech, trials=budget, seed=seed).lower_bound.epsilon)
    s, f = statistics.mean(sequential), statistics.mean(fixed)
    return f"| {name} | {budget:,} | {s:.3f} | {f:.3f} | {s / f:.3f} |" if f > 0 else f"| {name} | {budget:,} | {s:.3f} | {f:.3f} | – |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--only", help="a glob of mechanism names")
    parser.add_argument("--libraries", action="store_true", help="also the library adapters' rows")
    parser.add_argument("--skip-correct", action="store_true", help="only the buggy rows")
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"Buggy rows: trials per dataset to a certified violation (median over {args.seeds} seeds)\n")
    print("| mechanism | budget | sequential | missed | fixed (today's default) | missed | sequential / fixed |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, budget in _rows("violation", args.only, args.libraries):
        print(_buggy(name, budget, args.seeds), flush=True)
    if not args.skip_correct:
        print(f"\nCorrect rows: the bound at the full budget (mean over {args.seeds} seeds)\n")
        print("| mechanism | budget | sequential | fixed | ratio |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, budget in _rows("consistent", args.only, args.libraries):
            print(_correct(name, budget, args.seeds), flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
