"""One-run estimators on score laws outside score_estimators.py's grid, sparse leaks among them, against the peer's.

The laws of `score_estimators.py` were in view while the one-run rules were
built; these were not: five dense laws and seven leaks confined to a few
percent of the canaries (a share f of IN scores shifted by s, on Gaussian or
Student-t₃ noise, or on both sides). Each row is a one-run game of 2m
canaries, each IN with probability 1/2, drawn anew for each of 20 seeds; the
columns are the mean certified ε of the default one-run and f-DP one-run
estimators, of the peer's (jax_privacy's method as `score_estimators.py`
re-implements it: guesses of IN above each threshold of the ROC curve's
convex hull, Bonferroni over the hull), and ours over the peer's. δ = 1e-5,
95% confidence; the f-DP columns assume a Gaussian trade-off.

Run: python benchmarks/sparse_leaks.py            (m ∈ {10², 10³, 10⁴}: about 10 minutes on 2 shared cores)
     python benchmarks/sparse_leaks.py --sizes 100000        (a quarter of an hour)
     python benchmarks/sparse_leaks.py --sizes 100 --seeds 40
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
from score_estimators import DELTA, peer_one_run

Draw = Callable[[np.random.Generator, np.ndarray], np.ndarray]
"""Scores of the canaries given their truth (True = IN)."""
Noise = Callable[[np.random.Generator, int], np.ndarray]
"""n draws of the scores' noise."""


def normal(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.normal(size=n)


def student_t3(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.standard_t(3, n)


def shifted(noise: Noise, shift: float) -> Draw:
    """Return a dense law: noise, IN scores shifted by `shift`."""
    return lambda rng, truth: noise(rng, truth.size) + shift * truth


def leak(share: float, shift: float, *, noise: Noise = normal, both_sides: bool = False) -> Draw:
    """Return a sparse leak: noise, a `share` of IN scores shifted up by `shift` (and of OUT down, `both_sides`)."""

    def draw(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
        base = noise(rng, truth.size)
        hit = rng.random(truth.size) < share
        down = ~truth & hit if both_sides else np.zeros_like(truth)
        return base + shift * (truth & hit) - shift * down

    return draw


LAWS: dict[str, Draw] = {
    "N(μ=0.25)": shifted(normal, 0.25),
    "logistic +1": shifted(lambda r, n: r.logistic(size=n), 1.0),
    "exponential +0.5": shifted(lambda r, n: r.exponential(size=n), 0.5),
    "Poisson 3 vs 5": lambda rng, truth: rng.poisson(np.where(truth, 5.0, 3.0)).astype(float),
    "uniform +0.3": shifted(lambda r, n: r.random(n), 0.3),
    "2% +4": leak(0.02, 4.0),
    "0.5% +8": leak(0.005, 8.0),
    "3% +3": leak(0.03, 3.0),
    "5% +2": leak(0.05, 2.0),
    "10% +1": leak(0.10, 1.0),
    "t₃, 2% +6": leak(0.02, 6.0, noise=student_t3),
    "1% ±6 both sides": leak(0.01, 6.0, both_sides=True),
}

ESTIMATORS: dict[str, Callable[[Observations, int], float]] = {
    "one-run": lambda o, s: one_run_lower_bound(o, delta=DELTA, rng=s).epsilon,
    "peer 1-run": peer_one_run,
    "f-DP": lambda o, s: one_run_fdp_lower_bound(o, delta=DELTA, rng=s).epsilon,
    "peer f-DP": lambda o, s: peer_one_run(o, s, fdp=True),
}


def game(draw: Draw, m: int, seed: int) -> Observations:
    """Return one game of 2m canaries, each IN with probability 1/2, scored by `draw`."""
    rng = np.random.default_rng(seed)
    truth = rng.random(2 * m) < 0.5
    return Observations(scores=draw(rng, truth), truth=truth)


def means(draw: Draw, m: int, seeds: int) -> dict[str, float]:
    """Return each estimator's mean certified ε over `seeds` games."""
    sums = dict.fromkeys(ESTIMATORS, 0.0)
    for seed in range(seeds):
        obs = game(draw, m, seed)
        for name, estimate in ESTIMATORS.items():
            sums[name] += estimate(obs, seed)
    return {name: total / seeds for name, total in sums.items()}


def ratio(ours: float, peer: float) -> str:
    """Return ours ÷ the peer's, "—" when both are 0."""
    if peer > 0.0:
        return f"{ours / peer:.2f}"
    return "—" if ours == 0.0 else "∞"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000], help="m: 2m canaries per game")
    parser.add_argument("--seeds", type=int, default=20, help="games per row")
    args = parser.parse_args()
    table = Table(title=f"Mean certified ε over {args.seeds} seeds, δ = {DELTA:g}, 95%, 2m canaries")
    for column in ["scores", "m", *ESTIMATORS, "one-run ÷ peer", "f-DP ÷ peer"]:
        table.add_column(column, justify="right")
    for name, draw in LAWS.items():
        for m in args.sizes:
            v = means(draw, m, args.seeds)
            table.add_row(name, f"{m:,}", *(f"{x:.3f}" for x in v.values()),
                          ratio(v["one-run"], v["peer 1-run"]), ratio(v["f-DP"], v["peer f-DP"]))
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
