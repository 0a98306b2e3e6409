"""How often each one-run estimator certifies ε > 0 when nothing leaks, over many games (issue 16).

A null game: 2m canaries, each IN with probability 1/2, every score drawn
from N(0, 1) whatever the truth. That mechanism is 0-DP and 0-GDP, so any
certified ε > 0 is false, and a valid 95% bound certifies one in at most 5%
of games. The peer's estimators (jax_privacy's one-run methods, as
`score_estimators.py` re-implements them) test the thresholds of the ROC
curve's convex hull, found with the truth, at a Bonferroni level over the
hull's own size; ours test rules fixed before the scores are seen. Each row
gives the games that certified ε > 0, their rate and its 95% Clopper–Pearson
interval; "above 5%" marks a rate whose whole interval is, an estimator
that is not a valid 95% bound at that size. "1-run bonf" is our one-run
estimator with the weighted Bonferroni calibration; the default joint test
is slower at 2·10³ canaries, and its null counts are in the soundness table
of `score_estimators.py`. δ = 1e-5.

Run: python benchmarks/null_rates.py                  (m ∈ {10², 10³}, 10⁴ games each: about 3 minutes)
     python benchmarks/null_rates.py --sizes 10000    (about 7 minutes)
     python benchmarks/null_rates.py --sizes 100000 --games 2000    (about 11 minutes)
"""

from __future__ import annotations

import argparse
from typing import Callable

import numpy as np
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.one_run.binomial import one_run_lower_bound
from dpaudit.audit.estimators.one_run.fdp import one_run_fdp_lower_bound
from rich.console import Console
from rich.table import Table
from score_estimators import BETA, DELTA, peer_one_run
from sparse_leaks import game, normal

ESTIMATORS: dict[str, Callable[[Observations, int], float]] = {
    "1-run f-DP": lambda o, s: one_run_fdp_lower_bound(o, delta=DELTA, rng=s).epsilon,
    "peer f-DP": lambda o, s: peer_one_run(o, s, fdp=True),
    "1-run bonf": lambda o, s: one_run_lower_bound(o, delta=DELTA, calibration="bonferroni", rng=s).epsilon,
    "peer 1-run": peer_one_run,
}


def null_scores(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
    """Return N(0, 1) scores that ignore the truth."""
    return normal(rng, truth.size)


def false_positives(m: int, games: int) -> dict[str, int]:
    """Return, per estimator, how many of `games` null games it certified ε > 0 in."""
    counts = dict.fromkeys(ESTIMATORS, 0)
    for seed in range(games):
        obs = game(null_scores, m, seed)
        for name, estimate in ESTIMATORS.items():
            counts[name] += estimate(obs, seed) > 0.0
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000], help="m: 2m canaries per game")
    parser.add_argument("--games", type=int, default=10_000, help="null games per size")
    args = parser.parse_args()
    from statsmodels.stats.proportion import proportion_confint

    table = Table(title=f"Null games certifying ε > 0 at {1 - BETA:.0%} confidence, δ = {DELTA:g}")
    for column in ["estimator", "m", "games", "ε > 0", "rate", "95% interval", ""]:
        table.add_column(column, justify="right")
    for m in args.sizes:
        for name, count in false_positives(m, args.games).items():
            low, high = proportion_confint(count, args.games, alpha=0.05, method="beta")
            table.add_row(name, f"{m:,}", f"{args.games:,}", f"{count:,}", f"{count / args.games:.2%}",
                          f"{low:.2%} – {high:.2%}", "above 5%" if low > BETA else "")
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
