"""Issue 17's two measured edges: a one-coordinate leak in wide outputs, and a rare leak found by `trials="auto"`.

    python benchmarks/edges.py wide [--width 100000] [--trials 10000]
    python benchmarks/edges.py auto
    python benchmarks/edges.py suite [--seed 0]

`wide`: Laplace(1) noise on every coordinate of a `width`-wide output, one
coordinate also carrying the count (true ε 1), claimed 0.2; prints the
certified bound, the chosen test, seconds and peak memory (ru_maxrss).
`auto`: a count with Laplace(1) noise released exactly with probability
0.0002, claimed (1, 10⁻⁵)-DP; prints the verdict at 2·10⁵ trials and with
`trials="auto"`, with the trials the rounds drew.
`suite`: every built-in with a default pair audited with `trials="auto"` at
the default budget (2·10⁷), its verdict beside whether it is buggy; the
adapters of DP libraries (opendp_*, pydp_*, pipelinedp_*) are left out, as
they draw one output per Python call (minutes each at 10⁷ trials).
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from dpaudit.audit import audit_mechanism
from dpaudit.mechanisms import blackbox, get_mechanism, list_mechanisms
from dpaudit.mechanisms.registry import registration

LEAK = 4242


def wide(width: int, trials: int) -> None:
    def one_leaking_coordinate(data, rng, size):
        out = rng.laplace(0.0, 1.0, (size, width))
        out[:, LEAK] += np.sum(data)
        return out

    start = time.perf_counter()
    res = audit_mechanism(blackbox(one_leaking_coordinate, epsilon=0.2, null_record=0.0), np.zeros(1), np.ones(1),
                          trials=trials, seed=0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"width {width}, {trials} trials: lower {res.lower_bound.epsilon:.3f} ({res.verdict}), test {res.test}, "
          f"{time.perf_counter() - start:.0f} s, peak {peak:.0f} MB")


def auto() -> None:
    def exact_answer_sometimes(data, rng, size):
        out = np.sum(data) + rng.laplace(0.0, 1.0, size)
        out[rng.random(size) < 0.0002] = np.sum(data)
        return out

    mech = blackbox(exact_answer_sometimes, epsilon=1.0, delta=1e-5, null_record=0.0)
    fixed = audit_mechanism(mech, [0.0], [1.0], trials=200_000, seed=0)
    print(f"2e5 trials: lower {fixed.lower_bound.epsilon:.3f} ({fixed.verdict})")
    res = audit_mechanism(mech, [0.0], [1.0], trials="auto", seed=0)
    auto = res.phases.auto.to_dict()
    print(f"auto: lower {res.lower_bound.epsilon:.3f} ({res.verdict}), {len(auto['rounds'])} rounds, "
          f"{auto['trials_drawn']:,} trials drawn, stopped: {auto['stopped']}")


def suite(seed: int) -> None:
    wrong = 0
    for name in list_mechanisms():
        mech = get_mechanism(name)
        if name.startswith(("opendp_", "pydp_", "pipelinedp_")) or mech.default_pair is None:
            continue
        res = audit_mechanism(mech, trials="auto", seed=seed)
        expected = registration(name).expected
        ok = res.verdict == expected
        wrong += not ok
        print(f"{name:34s} {'buggy' if expected == 'violation' else 'correct':8s} {res.verdict:10s} "
              f"{res.lower_bound.epsilon:8.3f} (claim {mech.claim.epsilon:g}) "
              f"{res.phases.auto.trials_drawn:>11,} trials{'' if ok else '  WRONG'}", flush=True)
    print(f"wrong verdicts: {wrong}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", choices=("wide", "auto", "suite"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--width", type=int, default=100_000)
    parser.add_argument("--trials", type=int, default=10_000)
    args = parser.parse_args()
    if args.which == "wide":
        wide(args.width, args.trials)
    elif args.which == "auto":
        auto()
    else:
        suite(args.seed)


if __name__ == "__main__":
    main()
