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

With `--stated` it measures instead what the stated-settings score costs
and gives: the loops below with their four step settings stated
(`UserTrainer(..., clip_norm=C, noise_multiplier=σ, sample_rate=q,
learning_rate=lr)`), trained on the user's 1797 rows with one canary
crafted to reach 2C at θ₀, in for a random half of the runs (seed 0); every
run is scored four times, its data's part along the canary read on all
the rows, on the fixed sample of SAMPLED_ROWS rows that the score reads,
and on fixed samples of half and twice as many, and the
table gives per way the seconds a run takes to train and to score (the
clip factors' one-time calls included) and the scores' AUC (members'
scores above non-members', the power of the score: the same runs, so
a difference is the sample's alone; an ε certified from 100 runs would
move in coarse steps).

Run: python benchmarks/user_dpsgd.py [--runs 1000]   (about 13 minutes, in process)
     python benchmarks/user_dpsgd.py --stated [--runs 200]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from dpaudit.attacks.dpsgd.clip_reach import reaching_canaries
from dpaudit.attacks.dpsgd.user_data_gradients import SAMPLED_ROWS
from dpaudit.attacks.dpsgd.user_scores import user_white_box_scores
from dpaudit.attacks.games import MultiRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.canaries import audit_scores
from dpaudit.audit.audits.dpsgd import audit_dpsgd
from dpaudit.audit.estimators.certify import Bound
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.step_settings import StepSettings
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer
from rich.console import Console
from rich.table import Table
from scipy import stats

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

STATED = (  # (label, bug, clip norm): loops audited with their settings stated
    ("correct", None, 1.0),
    ("noise σ instead of σ·C, C = 10", "noise-unscaled", 10.0),
    ("sampled at 2q", "double-rate", 1.0),
)
LEARNING_RATE = 0.5


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


def stated_runs(bug: str | None, clip: float, runs: int, samples: tuple[int | None, ...]) -> dict:
    """Return, for a loop with its settings stated on the user's data, the membership of `runs` runs, the seconds spent
    training, and per row sample (None: every row) each run's score and the seconds spent scoring."""
    digits, rng = load_data("digits"), np.random.default_rng(0)
    train = loops.make_train(sigma=loops.SIGMA, clip=clip, rate=RATE, steps=STEPS, lr=LEARNING_RATE, bug=bug)
    settings = StepSettings(clip, loops.SIGMA, RATE, LEARNING_RATE)
    canary = reaching_canaries(1, data=digits, theta0=np.zeros(loops.SIZE), clip_norm=clip, losses=loops.losses,
                               rng=rng, per_norm=False)
    member = rng.permutation(runs) < runs // 2
    out: dict = {"member": member, "train": 0.0, "scores": {k: [] for k in samples}, "seconds": dict.fromkeys(samples, 0.0)}
    for run in range(runs):
        x = np.vstack([digits.x, canary.x]) if member[run] else digits.x
        y = np.concatenate([digits.y, canary.y]) if member[run] else digits.y
        start = time.perf_counter()
        iterates = train(x, y, np.random.default_rng([0, run]))
        out["train"] += time.perf_counter() - start
        for sample in samples:
            start = time.perf_counter()
            out["scores"][sample].append(user_white_box_scores(iterates, canary, losses=loops.losses, settings=settings,
                                                               rows=digits.rows, data=digits, sample=sample)[0])
            out["seconds"][sample] += time.perf_counter() - start
    return out


def stated(runs: int, samples: tuple[int | None, ...] = (None, SAMPLED_ROWS // 2, SAMPLED_ROWS, 2 * SAMPLED_ROWS)) -> Table:
    """Return the table of what the stated-settings score costs and gives, read on every row and on the fixed sample."""
    table = Table(title=f"Users' numpy loops with their settings stated, the user's data, one crafted canary, {runs} runs, seed 0")
    for column in ("loop", "rows read", "train s/run", "score s/run", "AUC"):
        table.add_column(column, justify="right")
    for label, bug, clip in STATED:
        out = stated_runs(bug, clip, runs, samples)
        member = out["member"]
        for sample in samples:
            scores = np.array(out["scores"][sample])
            auc = stats.mannwhitneyu(scores[member], scores[~member]).statistic / (member.sum() * (~member).sum())
            table.add_row(label, "all 1797" if sample is None else str(sample), f"{out['train'] / runs:.3f}",
                          f"{out['seconds'][sample] / runs:.3f}", f"{auc:.4f}")
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None, help="training runs of each audit's game (default 1000; "
                        "200 with --stated)")
    parser.add_argument("--stated", action="store_true", help="measure the stated-settings score instead (see above)")
    args = parser.parse_args()
    if args.stated:
        Console(width=160).print(stated(args.runs or 200))
        return
    runs = args.runs or 1000
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
