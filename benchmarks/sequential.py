"""Sequential against fixed two-dataset audits, side by side in one run (issue 53).

Buggy rows (registered with expected="violation"): the trials per dataset
drawn until a violation is certified, median over seeds, by
`trials="sequential"` (stops at the first certified violation) and by
today's default (a fixed budget, which draws all of it), both with the
suite's budget for the row (10⁶ × its `suite_trials`); "missed" counts the
seeds where the budget certified nothing, and the last column the median
seconds of each audit (what a user waits for where draws are expensive:
the library adapters, `--libraries`). Correct rows (expected
"consistent"): the mean bound at that full budget, sequential with
`give_up=False` (it runs to the budget) against fixed, and their ratio.
Built-in mechanisms only, unless --libraries (library adapters run in
their own environments).

--family canary plays the multi-run canary game (`audit_canaries`, canary
"auto", `MultiRun(runs, sequential=True)` against `MultiRun(runs)`, the
default 10,000 runs): runs to a certified violation on the buggy
built-ins it can play, the bound at the full budget on the correct ones.
--family dpsgd plays the DP-SGD bug options at the small scale of the
DP-SGD guide (`DPSGD_BUGS`, each at its documented runs): runs to a
certified violation, sequential against fixed, and both bounds.

Run: python benchmarks/sequential.py                    (3 seeds, built-ins: about 20 minutes)
     python benchmarks/sequential.py --only 'noisy_max*' --seeds 5
     python benchmarks/sequential.py --libraries --skip-correct --only 'pydp_*,pipelinedp_*,opacus_*,diffprivlib_*'
     (globs separated by commas; rows whose library environment is not built are left out)
     python benchmarks/sequential.py --family canary --seeds 3
     python benchmarks/sequential.py --family dpsgd --seeds 1
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
        if reg.expected == expected and (libraries or not library) and _chosen(name, only) and reg.ready():
            rows.append((name, int(TRIALS["quick"] * reg.suite_trials)))
    return rows


def _chosen(name: str, only: str | None) -> bool:
    """Return True when `only` is None or one of its comma-separated globs matches `name`."""
    return only is None or any(fnmatch.fnmatch(name, glob.strip()) for glob in only.split(","))


def _buggy(name: str, budget: int, seeds: int) -> str:
    """Return the table row of one buggy mechanism: draws to a certified violation, sequential and fixed."""
    from dpaudit.audit import audit_mechanism
    from dpaudit.audit.audits.auto_trials import AutoBudget
    from dpaudit.mechanisms import get_mechanism

    mech, drawn, missed, fixed_missed, seconds = get_mechanism(name), [], 0, 0, ([], [])
    for seed in range(seeds):
        res = audit_mechanism(mech, trials="sequential", seed=seed, budget=AutoBudget(max_trials=budget))
        if res.verdict == "violation":
            drawn.append(res.phases.sequential.trials_drawn)
        else:
            missed += 1
        fixed = audit_mechanism(mech, trials=budget, seed=seed)
        fixed_missed += fixed.verdict != "violation"
        seconds[0].append(res.seconds)
        seconds[1].append(fixed.seconds)
    median = f"{statistics.median(drawn):,.0f}" if drawn else "–"
    ratio = f"{statistics.median(drawn) / budget:.4f}" if drawn else "–"
    times = f"{statistics.median(seconds[0]):.2f} / {statistics.median(seconds[1]):.2f}"
    return f"| {name} | {budget:,} | {median} | {missed} | {budget:,} | {fixed_missed} | {ratio} | {times} |"


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


DPSGD_BUGS = (
    ("no-clipping", {"sample_rate": 1.0, "steps": 10, "noise_multiplier": 10.0}, {}, 200),
    ("noise-unscaled", {"clip_norm": 10.0, "sample_rate": 1.0, "steps": 10, "noise_multiplier": 10.0}, {}, 200),
    ("clip-batch-mean", {"sample_rate": 1.0, "steps": 10, "noise_multiplier": 10.0}, {}, 200),
    ("bias-unclipped", {"sample_rate": 1.0, "steps": 10, "noise_multiplier": 10.0}, {"dirac_target": "bias"}, 500),
    ("accountant-rate", {"sample_rate": 1.0, "steps": 10, "noise_multiplier": 2.0}, {}, 400),
)
"""The DP-SGD guide's known bugs at small scale (docs/guides/dpsgd.md): bug, training settings, attack, runs."""


def _membership_rows(expected: str, only: str | None) -> list[str]:
    """Return the built-ins expected to give `expected` that the canary game can play (records or a default pair)."""
    from dpaudit.mechanisms import get_mechanism, list_mechanisms
    from dpaudit.mechanisms.registry import registration

    rows = []
    for name in list_mechanisms():
        reg = registration(name)
        if reg.expected != expected or reg.factory.__module__.startswith("dpaudit.mechanisms.adapters"):
            continue
        if _chosen(name, only):
            mech = get_mechanism(name)
            if mech.records is not None or mech.default_pair is not None:
                rows.append(name)
    return rows


def _played(audit, sequential: bool, runs: int, seed: int, give_up: bool = True):
    """Return the result of `audit(game, seed)` for the multi-run game of `runs`, sequential or fixed (None: refused)."""
    from dpaudit.attacks.games import MultiRun
    from dpaudit.errors import InvalidParameterError

    try:
        return audit(MultiRun(runs, sequential=sequential, give_up=give_up), seed)
    except InvalidParameterError:
        return None


def _runs_row(name: str, audit, runs: int, seeds: int) -> str:
    """Return the row of one buggy target: runs to a certified violation (median), missed seeds, and both mean bounds."""
    drawn, missed, fixed_missed, bounds = [], 0, 0, ([], [])
    for seed in range(seeds):
        seq, fixed = _played(audit, True, runs, seed), _played(audit, False, runs, seed)
        if seq is None or fixed is None:
            return f"| {name} | {runs:,} | refused | | | | |"
        if seq.verdict == "violation":
            drawn.append(seq.lower_bound.trials)
        else:
            missed += 1
        fixed_missed += fixed.verdict != "violation"
        bounds[0].append(seq.lower_bound.epsilon)
        bounds[1].append(fixed.lower_bound.epsilon)
    median = f"{statistics.median(drawn):,.0f}" if drawn else "–"
    ratio = f"{statistics.median(drawn) / runs:.3f}" if drawn else "–"
    return (f"| {name} | {runs:,} | {median} | {missed} | {fixed_missed} | {ratio} | "
            f"{statistics.mean(bounds[0]):.3f} / {statistics.mean(bounds[1]):.3f} |")


def _bound_row(name: str, audit, runs: int, seeds: int) -> str:
    """Return the row of one correct target: the mean bound at the full budget, sequential (to the budget) and fixed."""
    seq = [_played(audit, True, runs, seed, give_up=False) for seed in range(seeds)]
    fixed = [_played(audit, False, runs, seed) for seed in range(seeds)]
    if None in seq or None in fixed:
        return f"| {name} | {runs:,} | refused | | |"
    s, f = (statistics.mean(r.lower_bound.epsilon for r in results) for results in (seq, fixed))
    return f"| {name} | {runs:,} | {s:.3f} | {f:.3f} | {s / f:.3f} |" if f > 0 else f"| {name} | {runs:,} | {s:.3f} | {f:.3f} | – |"


def _canary_family(args: argparse.Namespace) -> None:
    """Print the canary game's two tables: buggy built-ins (runs to a violation), correct ones (bounds at the budget)."""
    from dpaudit.attacks.games import DEFAULT_RUNS
    from dpaudit.audit import audit_canaries
    from dpaudit.mechanisms import get_mechanism

    def audit_of(name: str):
        return lambda game, seed: audit_canaries(get_mechanism(name), game=game, seed=seed)

    print(f"Buggy built-ins, canary game: runs to a certified violation (median over {args.seeds} seeds)\n")
    print("| mechanism | budget | sequential | missed | fixed missed | sequential / budget | mean ε sequential / fixed |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in _membership_rows("violation", args.only):
        print(_runs_row(name, audit_of(name), DEFAULT_RUNS, args.seeds), flush=True)
    if not args.skip_correct:
        print(f"\nCorrect built-ins, canary game: the bound at the full budget (mean over {args.seeds} seeds)\n")
        print("| mechanism | budget | sequential | fixed | ratio |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name in _membership_rows("consistent", args.only):
            print(_bound_row(name, audit_of(name), DEFAULT_RUNS, args.seeds), flush=True)


def _dpsgd_family(args: argparse.Namespace) -> None:
    """Print the DP-SGD bug options' table: training runs to a certified violation, sequential against fixed."""
    from dpaudit.audit import audit_dpsgd
    from dpaudit.mechanisms.dpsgd.config import DPSGDConfig

    print(f"DP-SGD bug options (docs/guides/dpsgd.md): runs to a certified violation (median over {args.seeds} seeds)\n")
    print("| bug | budget | sequential | missed | fixed missed | sequential / budget | mean ε sequential / fixed |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for bug, settings, attack, runs in DPSGD_BUGS:
        if _chosen(bug, args.only):
            config = DPSGDConfig(bug=bug, **settings)
            audit = lambda game, seed, c=config, a=attack: audit_dpsgd(c, game=game, seed=seed, **a)  # noqa: E731
            print(_runs_row(bug, audit, runs, args.seeds), flush=True)


def _two_dataset_family(args: argparse.Namespace) -> None:
    """Print the two-dataset tables (the module docstring)."""
    print(f"Buggy rows: trials per dataset to a certified violation (median over {args.seeds} seeds)\n")
    print("| mechanism | budget | sequential | missed | fixed (today's default) | missed | sequential / fixed "
          "| seconds sequential / fixed (median) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, budget in [] if args.skip_buggy else _rows("violation", args.only, args.libraries):
        print(_buggy(name, budget, args.seeds), flush=True)
    if not args.skip_correct:
        print(f"\nCorrect rows: the bound at the full budget (mean over {args.seeds} seeds)\n")
        print("| mechanism | budget | sequential | fixed | ratio |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, budget in _rows("consistent", args.only, args.libraries):
            print(_correct(name, budget, args.seeds), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--only", help="globs of mechanism names, separated by commas")
    parser.add_argument("--libraries", action="store_true", help="also the library adapters' rows")
    parser.add_argument("--skip-correct", action="store_true", help="only the buggy rows")
    parser.add_argument("--skip-buggy", action="store_true", help="only the correct rows (the two-dataset family)")
    parser.add_argument("--family", choices=("two-dataset", "canary", "dpsgd"), default="two-dataset",
                        help="the game: two-dataset (default), the multi-run canary game, or DP-SGD's bug options")
    args = parser.parse_args()
    start = time.perf_counter()
    {"two-dataset": _two_dataset_family, "canary": _canary_family, "dpsgd": _dpsgd_family}[args.family](args)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
