"""How often the two-dataset audit flags an exactly tight correct mechanism, and again after `recertify` (issue 47).

The built-in `geometric` (discrete Laplace) at ε is exactly ε-DP on its
default pair, so every `violation` is a false alarm, and a valid bound at
confidence 1 − β gives one in at most a fraction β of seeds. The audit is
run on seeds 0, 1, …; each result is then certified again under the same
`Bound` (`recertify`), which must pay for the round that `trials="auto"`
kept. Prints the seeds flagged, their rate and its 95% Clopper–Pearson
interval, for the audit and for its recertified result.

Run: python benchmarks/tight_false_alarms.py                       (5-DP, trials="auto", 200 seeds: about 7 minutes)
     python benchmarks/tight_false_alarms.py --trials 1000000      (the default fixed trials)
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=5.0, help="ε of the discrete Laplace, its exact ε")
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--trials", default="auto", help="trials per dataset, or auto")
    parser.add_argument("--confidence", type=float, default=0.95)
    args = parser.parse_args()
    from dpaudit.audit import audit_mechanism, recertify
    from dpaudit.mechanisms import get_mechanism
    from statsmodels.stats.proportion import proportion_confint

    trials = args.trials if args.trials == "auto" else int(args.trials)
    mech, start = get_mechanism("geometric", epsilon=args.epsilon), time.perf_counter()
    flagged = {"audit": 0, "recertified": 0}
    for seed in range(args.seeds):
        result = audit_mechanism(mech, trials=trials, seed=seed, confidence=args.confidence)
        flagged["audit"] += result.verdict == "violation"
        flagged["recertified"] += recertify(result, result.bound).verdict == "violation"
    print(f"geometric at ε = {args.epsilon:g} (exactly tight), trials={trials}, confidence {args.confidence:g}, "
          f"{args.seeds} seeds, {time.perf_counter() - start:.0f} s")
    for name, count in flagged.items():
        low, high = proportion_confint(count, args.seeds, alpha=0.05, method="beta")
        print(f"{name:>12s}: {count} of {args.seeds} flagged ({count / args.seeds:.1%}; 95% interval {low:.1%} – {high:.1%})")


if __name__ == "__main__":
    main()
