"""Users' own DP-SGD loops: what 1000 training runs certify white-box and black-box, and how long each audit takes.

The loops are `docs/examples/numpy_dpsgd.py`: logistic regression on the
digits in numpy, Poisson rate q = 0.1, 50 steps, σ = 2.1457 (claim ε = 1.50
at δ = 1e-5), every step's parameters released, nothing stated but the
claim and its event (so the white-box score is the setting-free one and the
crafted canaries form the ladder of clip norms). Each row is
`audit_dpsgd(target=..., threat=..., canary="crafted", runs=1000, seed=0,
dataset=...)`; the ideal row is the same threshold estimator on 1000 runs
of simulated optimal white-box scores of the same mechanism (a canary
gradient of norm exactly C, per-step likelihood ratio).

Run: python benchmarks/user_dpsgd.py [--runs 1000]   (about 15 minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from dpaudit.attacks.games import MultiRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.canaries import audit_scores
from dpaudit.audit.audits.dpsgd import audit_dpsgd
from dpaudit.audit.estimators.certify import Bound
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).parents[1] / "docs" / "examples"))
import numpy_dpsgd as loops  # noqa: E402

RATE, STEPS, DELTA = 0.1, 50, 1e-5
CASES = (  # (label, bug, clip norm, dataset, threat)
    ("correct", None, 1.0, "user", "white-box"),
    ("correct", None, 1.0, 20, "white-box"),
    ("noise σ instead of σ·C, C = 10", "noise-unscaled", 10.0, "user", "white-box"),
    ("noise σ instead of σ·C, C = 10", "noise-unscaled", 10.0, "user", "black-box"),
    ("biases left out of clipping, C = 0.1", "bias-unclipped", 0.1, 20, "white-box"),
    ("no clipping", "no-clipping", 1.0, 20, "white-box"),
    ("sampled at 2q", "double-rate", 1.0, "user", "white-box"),
)


def _trainer(bug: str | None, clip: float) -> UserTrainer:
    digits = load_data("digits")
    train = loops.make_train(sigma=loops.SIGMA, clip=clip, rate=RATE, steps=STEPS, bug=bug)
    return UserTrainer(train=train, losses=loops.losses, x=digits.x, y=digits.y, claim=Claim(1.5, DELTA),
                       event=poisson_event(loops.SIGMA, RATE, STEPS))


def true_epsilon(bug: str | None, clip: float) -> float:
    """Return the PLD ε at δ of what the loop does (∞ when a gradient escapes clipping)."""
    if bug in ("bias-unclipped", "no-clipping"):
        return float("inf")
    sigma = loops.SIGMA / clip if bug == "noise-unscaled" else loops.SIGMA
    return pld_epsilon(poisson_event(sigma, 2 * RATE if bug == "double-rate" else RATE, STEPS), DELTA)


def ideal(runs: int, rate: float, seed: int = 0) -> float:
    """Return the threshold estimator's ε on simulated optimal white-box scores (a canary of norm C sampled at `rate`)."""
    rng = np.random.default_rng(seed)
    member = rng.permutation(runs) < runs // 2
    mu = 1.0 / loops.SIGMA
    x = rng.normal(size=(runs, STEPS)) + mu * ((rng.random((runs, STEPS)) < rate) & member[:, None])
    scores = np.log1p(rate * np.expm1(mu * x - mu**2 / 2)).sum(axis=1)
    return audit_scores(Observations(scores, member), game=MultiRun(runs), bound=Bound(delta=DELTA), seed=seed).lower_bound.epsilon


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="training runs per audit (default 1000)")
    runs = parser.parse_args().runs
    table = Table(title=f"Users' numpy DP-SGD loops, claim ε = 1.50, crafted canaries, {runs} runs, seed 0")
    for column in ("loop", "data", "threat", "true ε", "certified ε", "verdict", "seconds"):
        table.add_column(column, justify="right")
    for label, bug, clip, dataset, threat in CASES:
        start = time.perf_counter()
        result = audit_dpsgd(target=_trainer(bug, clip), threat=threat, canary="crafted", runs=runs, seed=0, dataset=dataset)
        table.add_row(label, "all 1797 rows" if dataset == "user" else f"{dataset} rows", threat,
                      f"{true_epsilon(bug, clip):.2f}", f"{result.lower_bound.epsilon:.3f}", result.verdict,
                      f"{time.perf_counter() - start:.0f}")
    for label, rate in (("ideal scores, correct", RATE), ("ideal scores, sampled at 2q", 2 * RATE)):
        table.add_row(label, "-", "white-box", f"{pld_epsilon(poisson_event(loops.SIGMA, rate, STEPS), DELTA):.2f}",
                      f"{ideal(runs, rate):.3f}", "-", "-")
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
