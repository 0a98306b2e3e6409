"""How much the adversarial rows reveal of a loop that clips the batch's summed gradient: the white-box gap, per step.

A user's numpy loop (`docs/examples/numpy_dpsgd.py`: logistic regression on
the digits, q = 0.1, 50 steps, σ = 2, C = 1), correct or with the batch-sum
bug, trained `--runs` times with the largest crafted canary of the ladder
in and as many times without it, on two datasets `dataset="auto"` screens:
2 of the user's rows, and the adversarial rows (30 rows against each
crafted canary, `attacks/dpsgd/adversarial.py`). For each run, the
canary's per-step projection x_t of the update on its gradient direction,
in units of the step's noise (the setting-free white-box statistic of
`attacks/dpsgd/user_scores.py`, unweighted). Printed: the standardised gap
of Σ_t x_t between runs with and without the canary, and the mean gap of
x_t over the first and the last ten steps, and the mean x_t of the runs
without the canary over the same steps (the data's part along the
canary's direction: negative while the rows push against it). A batch-sum
bug on rows that stay against the canary would show a gap near twice the
correct loop's; rows that training fits lose that effect.

Run: python benchmarks/adversarial_rows.py [--runs 100] [--seed 1]   (about a minute)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
from dpaudit.attacks.dpsgd.audit_datasets import ADVERSARIAL, user_dataset
from dpaudit.attacks.dpsgd.user_scores import _projections, noise_scales
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).parents[1] / "docs" / "examples"))
import numpy_dpsgd as loops  # noqa: E402

SIGMA, RATE, STEPS, DELTA = 2.0, 0.1, 50, 1e-5


def _target(bug: str | None) -> UserTrainer:
    digits, event = load_data("digits"), poisson_event(SIGMA, RATE, STEPS)
    return UserTrainer(train=loops.make_train(sigma=SIGMA, rate=RATE, steps=STEPS, bug=bug), losses=loops.losses,
                       x=digits.x, y=digits.y, claim=Claim(pld_epsilon(event, DELTA), DELTA), event=event)


def per_step(bug: str | None, dataset: str | int, runs: int, seed: int) -> dict[bool, np.ndarray]:
    """Return the (runs, STEPS) per-step statistics x_t with the largest ladder canary in (True) and out (False)."""
    chosen = user_dataset(_target(bug), dataset, "crafted", 1, np.random.default_rng(seed), ladder=True,
                          dirac_target="quiet")
    made = chosen.canaries
    last = made.size - 1
    canary = dataclasses.replace(made, x=made.x[last:], y=made.y[last:], magnitudes=made.magnitudes[last:])
    out: dict[bool, list[np.ndarray]] = {True: [], False: []}
    for run in range(runs):
        for member in (True, False):
            trained = chosen.trainer.train(None, canary.insertions(np.array([member])),
                                           np.random.default_rng([seed, run, member]), keep_iterates=True)
            updates = (trained.iterates[:-1] - trained.iterates[1:]).astype(np.float64)
            projections, _, _ = _projections(trained.iterates[:-1], updates, canary, chosen.trainer.losses)
            out[member].append(projections[:, 0] / noise_scales(updates))
    return {member: np.array(rows) for member, rows in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="runs with the canary and as many without (default 100)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the datasets, canaries and runs (default 1)")
    args = parser.parse_args()
    table = Table(title=f"Largest crafted canary, {args.runs} runs in and {args.runs} out, seed {args.seed}")
    for column in ("loop", "dataset", "standardised gap of Σ x_t", "gap of x_t, steps 1–10", "gap of x_t, steps 41–50",
                   "x_t without it, steps 1–10", "x_t without it, steps 41–50"):
        table.add_column(column, justify="right")
    with np.errstate(divide="ignore", invalid="ignore"):
        for bug in (None, "batch-sum"):
            for dataset, label in ((2, "2 rows"), (ADVERSARIAL, "adversarial rows")):
                x = per_step(bug, dataset, args.runs, args.seed)
                sums = {member: x[member].sum(axis=1) for member in x}
                gap = (sums[True].mean() - sums[False].mean()) / np.sqrt((sums[True].var() + sums[False].var()) / 2)
                steps = x[True].mean(axis=0) - x[False].mean(axis=0)
                out = x[False].mean(axis=0)
                table.add_row(bug or "correct", label, f"{gap:.2f}", f"{steps[:10].mean():.3f}", f"{steps[-10:].mean():.3f}",
                              f"{out[:10].mean():.3f}", f"{out[-10:].mean():.3f}")
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
