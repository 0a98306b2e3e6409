"""Replay-then-certify against the black-box audit alone, side by side in one run, on structural bugs.

For each bug (a vectorized function `fn(data, rng, size)` claiming ε = 1):
the black-box audit at its default (`audit_mechanism`, 10⁶ outputs per
dataset) and in rounds (`trials="auto"`, the outputs it needed to certify a
violation), then `audit_replay` at its default (its screening runs plus
each certificate's outputs). Prints one row per bug: verdicts, certified ε,
outputs per dataset, and the ratio replay / black-box.

    .venv/bin/python benchmarks/replay.py            # every bug
    .venv/bin/python benchmarks/replay.py --bugs sparse_raw_sum --seed 1
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from dpaudit.audit import audit_mechanism, audit_replay
from dpaudit.mechanisms import blackbox

WIDTH = 50
D0, D1 = [0.0, 1.0, 0.5], [0.0, 1.0, 0.5, 1.0]


def sparse_raw_sum(d, rng, size):
    """WIDTH clipped sums charged ε = 1 together (scale WIDTH each), but entry 7 is in cents (×100) at the same scale."""
    x = np.asarray(d, float)
    values = np.full(WIDTH, np.clip(x, 0, 1).sum())
    values[7] *= 100
    return values + rng.laplace(0, WIDTH, size=(size, WIDTH))


def four_charged_as_one(d, rng, size):
    """Four noisy sums, each with the scale of ε = 1, released together under ε = 1."""
    return np.clip(d, 0, 1).sum() + rng.laplace(0, 1, size=(size, 4))


def private_n_mean(d, rng, size):
    """A mean whose noise is scaled by the private dataset's length."""
    x = np.clip(d, 0, 1)
    return x.sum() / len(x) + rng.laplace(0, 1 / len(x), size=size)


BUGS = {"sparse_raw_sum": (sparse_raw_sum, ([0.0, 1.0], [0.0, 1.0, 1.0])),
        "four_charged_as_one": (four_charged_as_one, (D0, D1)),
        "private_n_mean": (private_n_mean, ([0.0], [0.0, 1.0]))}


def _row(name: str, seed: int) -> str:
    fn, pair = BUGS[name]
    mech = blackbox(fn, epsilon=1.0, name=name)
    t = time.perf_counter()
    default = audit_mechanism(mech, *pair, seed=seed)
    t_default = time.perf_counter() - t
    auto = audit_mechanism(mech, *pair, seed=seed, trials="auto")
    needed = sum(r.trials for r in auto.phases.auto.rounds)
    t = time.perf_counter()
    replay = audit_replay(mech, *pair, seed=seed)
    t_replay = time.perf_counter() - t
    used = replay.replay.runs + sum(c.result.lower_bound.trials for c in replay.replay.certified)
    return (f"{name:22} black-box 1e6: {default.verdict:10} ε={default.lower_bound.epsilon:.3f} ({t_default:.1f} s) | "
            f"auto needed {needed:>9,} ({auto.verdict}) | replay: {replay.verdict:10} ε={replay.lower_bound.epsilon:.3f} "
            f"with {used:,} ({t_replay:.1f} s) | replay/auto = {used / needed:.3f}, replay/1e6 = {used / 1e6:.3f}")


def _speed(seed: int) -> str:
    """Return the time to replay 1000 candidate pairs of a numpy function (two runs each, one more for a move read
    through the noise under it)."""
    from dpaudit.attacks.replay.candidates import Candidate, screen

    mech = blackbox(four_charged_as_one, epsilon=1.0)
    pairs = [Candidate("insert", [0.0, 1.0], [0.0, 1.0, v], "") for v in np.linspace(-2, 2, 1000)]
    t = time.perf_counter()
    screened = screen(mech, pairs, seed=np.random.SeedSequence(seed))
    runs = sum(r.runs for _, r in screened)
    return f"1000 candidates replayed ({runs:,} runs) in {time.perf_counter() - t:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bugs", nargs="+", choices=list(BUGS), default=list(BUGS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(_speed(args.seed))
    for name in args.bugs:
        print(_row(name, args.seed))


if __name__ == "__main__":
    main()
