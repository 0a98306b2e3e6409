"""Users' own DP-SGD loops audited as a new user would: which dataset certified, what each gave, how long it took.

The loops are `docs/examples/numpy_dpsgd.py`: logistic regression on the
digits in numpy, Poisson rate q = 0.1, 50 steps, σ = 2.1457 (claim ε = 1.50
at δ = 1e-5), every step's parameters released, nothing stated but the
claim and its event (so the white-box score is the setting-free one and the
crafted canaries form the ladder of clip norms). Each row is
`audit_dpsgd(target=..., threat="white-box", canary="crafted", runs=1000,
seed=0)` at every other default: `dataset="auto"` screens the canaries alone
(where the loop trains on no rows), 2 rows, adversarial rows and the
user's data, and audits the best. The first table gives the verdict's
bound, the GDP bound beside it and the runs an assumption-free audit would
need; the second, for every loop and screened dataset, its best canary's
screening μ̂ and ε. The ideal rows are the same threshold estimator on 1000
runs of simulated optimal white-box scores of the same mechanism (a canary
gradient of norm exactly C, per-step likelihood ratio).

Run: python benchmarks/user_dpsgd.py [--runs 1000]   (about 13 minutes, in process)
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
CASES = (  # (label, bug, clip norm, fixed batch size)
    ("correct", None, 1.0, None),
    ("correct, fixed batch size 180", None, 1.0, 180.0),
    ("noise σ instead of σ·C, C = 10", "noise-unscaled", 10.0, None),
    ("biases left out of clipping, C = 0.1", "bias-unclipped", 0.1, None),
    ("batch sum clipped instead of each example", "batch-sum", 1.0, None),
    ("no clipping", "no-clipping", 1.0, None),
    ("sampled at 2q", "double-rate", 1.0, None),
)


def _trainer(bug: str | None, clip: float, batch: float | None) -> UserTrainer:
    digits = load_data("digits")
    train = loops.make_train(sigma=loops.SIGMA, clip=clip, rate=RATE, steps=STEPS, bug=bug, batch=batch)
    return UserTrainer(train=train, losses=loops.losses, x=digits.x, y=digits.y, claim=Claim(1.5, DELTA),
                       event=poisson_event(loops.SIGMA, RATE, STEPS))


def true_epsilon(bug: str | None, clip: float) -> float:
    """Return the PLD ε at δ of what the loop does (∞ when a gradient escapes clipping)."""
    if bug in ("bias-unclipped", "no-clipping"):
        return float("inf")
    sigma = loops.SIGMA / clip if bug == "noise-unscaled" else loops.SIGMA / 2 if bug == "batch-sum" else loops.SIGMA
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
    parser.add_argument("--runs", type=int, default=1000, help="training runs of each audit's game (default 1000)")
    runs = parser.parse_args().runs
    verdicts = Table(title=f"Users' numpy DP-SGD loops, claim ε = 1.50, crafted canaries, {runs} runs, seed 0, dataset auto")
    for column in ("loop", "true ε", "dataset audited", "certified ε", "verdict", "GDP ε", "under GDP", "projected runs",
                   "seconds"):
        verdicts.add_column(column, justify="right")
    screened = Table(title="What each screened dataset gave (its best canary: screening μ̂, ε on the screening runs alone)")
    for column in ("loop", "dataset", "μ̂", "ε"):
        screened.add_column(column, justify="right")
    for label, bug, clip, batch in CASES:
        start = time.perf_counter()
        result = audit_dpsgd(target=_trainer(bug, clip, batch), threat="white-box", canary="crafted", runs=runs, seed=0)
        beside = result.beside
        verdicts.add_row(label, f"{true_epsilon(bug, clip):.2f}", result.attack["dataset"], f"{result.lower_bound.epsilon:.3f}",
                         result.verdict, f"{beside.epsilon:.3f}", result.beside_verdict, str(result.projected_runs),
                         f"{time.perf_counter() - start:.0f}")
        for dataset in result.attack["datasets_played"]:
            rows = [row for row in result.attack["screening"] if row["dataset"] == dataset]
            best = max(rows, key=lambda row: row["screening_mu"])
            screened.add_row(label, dataset, f"{best['screening_mu']:.2f}", f"{max(r['screening_epsilon'] for r in rows):.3f}")
    for label, rate in (("ideal scores, correct", RATE), ("ideal scores, sampled at 2q", 2 * RATE)):
        verdicts.add_row(label, f"{pld_epsilon(poisson_event(loops.SIGMA, rate, STEPS), DELTA):.2f}", "-",
                         f"{ideal(runs, rate):.3f}", "-", "-", "-", "-", "-")
    console = Console(width=160)
    console.print(verdicts)
    console.print(screened)


if __name__ == "__main__":
    main()
