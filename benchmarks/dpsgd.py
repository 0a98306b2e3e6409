"""DP-SGD audits: training runs per minute, and the share of the PLD bound each estimator certifies.

1. Runs per minute of logistic regression on the digits (q = 256/1797, 100
   steps): dpaudit's torch.func trainer (logreg and the 64-32-10 MLP),
   Opacus 1.6 (Poisson sampling), and the same model trained without
   privacy (autograd on the batch mean, the same Poisson batches).
2. Certified ε / PLD upper bound of the white-box Dirac-canary audit of the
   correct trainer at 200, 500 and 1000 training runs (the first R of 1000
   independent runs; threshold/Clopper–Pearson and GDP), for full batches
   (q = 1, 10 steps) at ε ≈ 8 and ≈ 4, and Poisson sampling (q = 256/1797,
   100 steps) at ε ≈ 8; and one-run audits (one MLP training run with m =
   200, 500, 1000 Dirac canaries; one-run and f-DP one-run estimators).

Run: python benchmarks/dpsgd.py [--seeds 5]   (about 4 minutes a seed on 2 cores)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from dpaudit.attacks.games import MultiRun, OneRun
from dpaudit.audit.audits.canaries import audit_scores
from dpaudit.audit.audits.dpsgd import audit_dpsgd
from dpaudit.audit.estimators.certify import Bound
from dpaudit.experiments.dpsgd import calibrate
from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.opacus_target import OpacusTrainer
from dpaudit.mechanisms.dpsgd.trainer import DPSGDTrainer, Insertions
from rich.console import Console
from rich.table import Table

RATE, DELTA, TIMED_RUNS = 256 / 1797, 1e-5, 10
RUN_COUNTS = (200, 500, 1000)
CANARY_COUNTS = (200, 500, 1000)


def _per_minute(train) -> float:
    train(0)
    start = time.perf_counter()
    for seed in range(1, TIMED_RUNS + 1):
        train(seed)
    return 60 * TIMED_RUNS / (time.perf_counter() - start)


def _non_private(data, steps: int = 100, lr: float = 0.5):
    import torch

    def train(seed: int) -> None:
        rng = np.random.default_rng(seed)
        model = torch.nn.Linear(data.features, data.classes)
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        x, y = torch.as_tensor(data.x), torch.as_tensor(data.y)
        for _ in range(steps):
            rows = torch.as_tensor(np.flatnonzero(rng.random(data.rows) < RATE))
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x[rows]), y[rows]).backward()
            optimizer.step()
    return train


def speeds() -> list[tuple[str, float]]:
    """Return (trainer, training runs per minute) for the four trainers."""
    data = load_data("digits")
    rows = []
    for label, trainer in (("dpaudit, logreg", DPSGDTrainer(DPSGDConfig(), data)),
                           ("dpaudit, mlp", DPSGDTrainer(DPSGDConfig(model="mlp"), data)),
                           ("Opacus 1.6, logreg", OpacusTrainer(DPSGDConfig(), data))):
        theta0 = trainer.model.initial(np.random.default_rng(0)).cpu().numpy()
        rows.append((label, _per_minute(lambda s, t=trainer: t.train(theta0, Insertions(), np.random.default_rng(s)))))
    rows.append(("no privacy, logreg", _per_minute(_non_private(data))))
    return rows


def full_batch_sigma(epsilon: float, steps: int = 10) -> float:
    """Return σ giving ε at δ for `steps` full-batch steps."""
    from scipy.optimize import brentq

    return brentq(lambda s: pld_epsilon(poisson_event(s, 1.0, steps), DELTA) - epsilon, 0.1, 100.0, xtol=1e-4)


def multi_run_ratios(seed: int) -> list[tuple[str, str, int, float]]:
    """Return (setting, estimator, runs, certified/upper) of the white-box Dirac audits."""
    settings = {
        "full batch, ε ≈ 8": DPSGDConfig(noise_multiplier=full_batch_sigma(8.0), sample_rate=1.0, steps=10),
        "full batch, ε ≈ 4": DPSGDConfig(noise_multiplier=full_batch_sigma(4.0), sample_rate=1.0, steps=10),
        "Poisson q = 0.14, ε ≈ 8": DPSGDConfig(noise_multiplier=calibrate(8.0, 100), sample_rate=RATE, steps=100),
    }
    out = []
    for label, config in settings.items():
        result = audit_dpsgd(config, runs=max(RUN_COUNTS), seed=seed)
        for runs in RUN_COUNTS:
            obs = result.observations
            first = type(obs)(obs.scores[:runs], obs.truth[:runs])
            for estimator in ("threshold", "gdp"):
                bound = audit_scores(first, game=MultiRun(runs), bound=Bound(estimator, delta=DELTA), seed=seed)
                out.append((label, estimator, runs, bound.lower_bound.epsilon / result.upper_bound.epsilon))
    return out


def one_run_ratios(seed: int) -> list[tuple[str, str, int, float]]:
    """Return (setting, estimator, canaries, certified/upper) of one-run white-box Dirac audits of the MLP."""
    config = DPSGDConfig(model="mlp", noise_multiplier=calibrate(8.0, 100), sample_rate=RATE, steps=100)
    out = []
    for m in CANARY_COUNTS:
        result = audit_dpsgd(config, game=OneRun(m), seed=seed)
        for estimator in ("one-run", "one-run-fdp"):
            bound = audit_scores(result.observations, game=OneRun(m), bound=Bound(estimator, delta=DELTA), seed=seed)
            out.append(("one run, MLP, Poisson, ε ≈ 8", estimator, m, bound.lower_bound.epsilon / result.upper_bound.epsilon))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1, help="seeds to average the ratios over (default 1)")
    seeds = range(parser.parse_args().seeds)
    import torch

    torch.set_num_threads(1)  # as the audit's own runs do: one thread a run, parallel runs on workers
    console = Console(width=120)
    speed = Table(title=f"Training runs per minute (digits, q = 256/1797, 100 steps, mean of {TIMED_RUNS} after a warm-up, one thread)")
    speed.add_column("trainer")
    speed.add_column("runs / minute", justify="right")
    for label, rate in speeds():
        speed.add_row(label, f"{rate:,.0f}")
    console.print(speed)
    rows: dict[tuple[str, str, int], list[float]] = {}
    for seed in seeds:
        for label, estimator, count, ratio in multi_run_ratios(seed) + one_run_ratios(seed):
            rows.setdefault((label, estimator, count), []).append(ratio)
    ratio = Table(title=f"Certified ε / PLD upper bound, white-box Dirac canary, mean of {len(seeds)} seed(s)")
    for column in ("setting", "estimator", "runs or canaries", "certified / upper"):
        ratio.add_column(column, justify="right")
    for (label, estimator, count), values in rows.items():
        ratio.add_row(label, estimator, f"{count:,}", f"{np.mean(values):.2f}")
    console.print(ratio)


if __name__ == "__main__":
    main()
