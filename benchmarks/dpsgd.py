"""DP-SGD audits: training runs per minute, the share of the PLD bound each estimator certifies, and against the ideal.

1. Runs per minute of logistic regression on the digits (q = 256/1797, 100
   steps): dpaudit's torch.func trainer one run at a time and its runs
   trained side by side (one group of as many runs as its memory budget
   holds), for logreg and the 64-32-10 MLP, with the ratio of the two;
   Opacus 1.6 (Poisson sampling), and the same model trained without
   privacy (autograd on the batch mean, the same Poisson batches).
2. Certified ε / PLD upper bound of the white-box Dirac-canary audit of the
   correct trainer at 200, 500 and 1000 training runs (the first R of 1000
   independent runs; threshold/Clopper–Pearson and GDP), for full batches
   (q = 1, 10 steps) at ε ≈ 8 and ≈ 4, and Poisson sampling (q = 256/1797,
   100 steps) at ε ≈ 8.
3. One run against the ideal: one MLP training run with m = 500 and 1000
   white-box Dirac canaries, under Poisson sampling (q = 256/1797, 100
   steps) and full batches (q = 1, 10 steps) at ε ≈ 2, 4 and 8, certified by
   the one-run and f-DP one-run estimators; beside what the same estimator
   certifies on ideal scores of the same mechanism at the same m (each
   canary's contribution exactly C, nothing else moving its direction: the
   per-step likelihood-ratio sum of x_t ~ N(b_t/σ, 1), b_t ~ Bernoulli(q)
   if IN), mean of IDEAL_SEEDS simulated games.
4. White-box against black-box, the multi-run audits of `docs/figures/dpsgd.png`
   (logistic regression, Poisson, 100 steps, 500 runs; white-box Dirac
   canary, all iterates; black-box crafted input, final model, loss
   difference), beside the ideal white-box audit's mean and standard
   deviation over IDEAL_SEEDS simulated sets of 500 runs.
5. Many runs (`many-runs`): one multi-run audit of 10⁵ training runs, full
   batches (q = 1, 10 steps) at ε ≈ 8, white-box Dirac canary, the default
   threshold estimator (no assumption): certified ε, PLD bound, their
   ratio and the wall time, the runs trained side by side in process on one
   thread (on this loaded 2-core machine a local Dask cluster of two
   workers was slower: 84 s against 52 s for 10⁴ runs).

Run: python benchmarks/dpsgd.py [--seeds 5] [--parts speeds multi-run one-run threats many-runs]
(on 2 shared cores, runs one at a time: multi-run about 9 minutes a seed, one-run about 2, threats about 10;
multi-run and threats now train side by side; many-runs about 10 minutes under a load average of 12–17)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from dpaudit.attacks.games import MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.canaries import audit_scores
from dpaudit.audit.audits.dpsgd import audit_dpsgd
from dpaudit.audit.estimators.certify import Bound
from dpaudit.experiments.dpsgd import MULTI, calibrate
from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
from dpaudit.mechanisms.dpsgd.batched_trainer import BatchedDPSGDTrainer
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.opacus_target import OpacusTrainer
from dpaudit.mechanisms.dpsgd.trainer import DPSGDTrainer, Insertions
from rich.console import Console
from rich.table import Table

RATE, DELTA, TIMED_RUNS = 256 / 1797, 1e-5, 10
RUN_COUNTS = (200, 500, 1000)
CANARY_COUNTS = (500, 1000)
EPSILONS = (2.0, 4.0, 8.0)
FIGURE_RUNS = 500
IDEAL_SEEDS = 20
THREAT_IDEAL_SEEDS = 200
MANY_RUNS = 100_000
PARTS = ("speeds", "multi-run", "one-run", "threats", "many-runs")


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


def _side_by_side_per_minute(trainer: BatchedDPSGDTrainer, theta0: np.ndarray) -> float:
    """Return runs a minute of one group of as many runs as the trainer's memory budget holds, after a small warm-up group."""
    runs = trainer.group_size(keep_iterates=False)
    trainer.train_runs(theta0, [Insertions()] * 8, [np.random.default_rng(s) for s in range(8)])
    start = time.perf_counter()
    trainer.train_runs(theta0, [Insertions()] * runs, [np.random.default_rng(s) for s in range(runs)])
    return 60 * runs / (time.perf_counter() - start)


def speeds() -> list[tuple[str, float, float | None]]:
    """Return (trainer, training runs per minute, ratio to the same model one run at a time) for the six trainers."""
    data = load_data("digits")
    rows: list[tuple[str, float, float | None]] = []
    for model in ("logreg", "mlp"):
        trainer, batched = DPSGDTrainer(DPSGDConfig(model=model), data), BatchedDPSGDTrainer(DPSGDConfig(model=model), data)
        theta0 = trainer.model.initial(np.random.default_rng(0)).cpu().numpy()
        alone = _per_minute(lambda s, t=trainer: t.train(theta0, Insertions(), np.random.default_rng(s)))
        side = _side_by_side_per_minute(batched, theta0)
        rows += [(f"dpaudit, {model}, one run at a time", alone, None), (f"dpaudit, {model}, side by side", side, side / alone)]
    trainer = OpacusTrainer(DPSGDConfig(), data)
    theta0 = trainer.model.initial(np.random.default_rng(0)).cpu().numpy()
    rows.append(("Opacus 1.6, logreg", _per_minute(lambda s: trainer.train(theta0, Insertions(), np.random.default_rng(s))), None))
    rows.append(("no privacy, logreg", _per_minute(_non_private(data)), None))
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


def many_runs(seed: int) -> tuple[float, float, float]:
    """Return (certified ε, PLD bound, seconds) of the MANY_RUNS-run white-box Dirac audit, full batches at ε ≈ 8."""
    config = DPSGDConfig(noise_multiplier=full_batch_sigma(8.0), sample_rate=1.0, steps=10)
    start = time.perf_counter()
    result = audit_dpsgd(config, runs=MANY_RUNS, seed=seed)
    return result.lower_bound.epsilon, result.upper_bound.epsilon, time.perf_counter() - start


def ideal_scores(included: np.ndarray, *, sigma: float, q: float, steps: int, rng: np.random.Generator) -> Observations:
    """Return white-box scores of Dirac canaries in the ideal: contribution exactly C, nothing else in its direction.

    At each step x_t ~ N(b_t/σ, 1), b_t ~ Bernoulli(q) for a canary marked
    in `included` and 0 otherwise; the score is the optimal
    Σ_t log(1 − q + q·exp(x_t/σ − 1/(2σ²))), or Σ_t x_t at q = 1.
    """
    size = len(included)
    x = rng.normal(size=(size, steps)) + ((rng.random((size, steps)) < q) & included[:, None]) / sigma
    scores = np.log1p(q * np.expm1(x / sigma - 0.5 / sigma**2)).sum(axis=1) if q < 1 else x.sum(axis=1)
    return Observations(scores, included)


def _one_run_settings() -> dict[tuple[str, float], DPSGDConfig]:
    settings = {}
    for epsilon in EPSILONS:
        settings[("Poisson q = 0.14, 100 steps", epsilon)] = DPSGDConfig(
            model="mlp", noise_multiplier=calibrate(epsilon, 100), sample_rate=RATE, steps=100)
        settings[("full batch, 10 steps", epsilon)] = DPSGDConfig(
            model="mlp", noise_multiplier=full_batch_sigma(epsilon), sample_rate=1.0, steps=10)
    return settings


def one_run_against_ideal(seeds: range) -> list[tuple[str, float, int, str, float, float, float]]:
    """Return (setting, upper ε, m, estimator, certified, ideal, certified/ideal) of one-run white-box Dirac audits of the MLP.

    Certified: mean over `seeds` of one training run each; ideal: mean over
    IDEAL_SEEDS simulated games (`ideal_scores`) of the same σ, q, steps and m.
    """
    out = []
    for (label, epsilon), config in _one_run_settings().items():
        for m in CANARY_COUNTS:
            game, certified, ideal = OneRun(m), {}, {}
            for seed in seeds:
                result = audit_dpsgd(config, game=game, seed=seed)
                upper = result.upper_bound.epsilon
                for estimator in ("one-run", "one-run-fdp"):
                    bound = audit_scores(result.observations, game=game, bound=Bound(estimator, delta=DELTA), seed=seed)
                    certified.setdefault(estimator, []).append(bound.lower_bound.epsilon)
            for seed in range(IDEAL_SEEDS):
                rng = np.random.default_rng(seed)
                obs = ideal_scores(rng.random(m) < 0.5, sigma=config.noise_multiplier, q=config.sample_rate,
                                   steps=config.steps, rng=rng)
                for estimator in certified:
                    bound = audit_scores(obs, game=game, bound=Bound(estimator, delta=DELTA), seed=seed)
                    ideal.setdefault(estimator, []).append(bound.lower_bound.epsilon)
            for estimator in certified:
                real, best = np.mean(certified[estimator]), np.mean(ideal[estimator])
                out.append((f"{label}, ε ≈ {epsilon:g}", upper, m, estimator, real, best, real / best))
    return out


def _auc(obs: Observations) -> float:
    """Return the share of (IN, OUT) pairs whose IN score is higher (ties count half): the area under the ROC curve."""
    diff = obs.in_scores[:, None] - obs.out_scores[None, :]
    return float(np.mean(diff > 0) + np.mean(diff == 0) / 2)


def threat_comparison(seeds: range) -> list[tuple[float, str, str, float, float, float]]:
    """Return (ε, audit, statistic, mean, ideal mean, ideal sd) of the figure's multi-run audits.

    The audits of `experiments/dpsgd.py` (MULTI: white-box Dirac, black-box
    crafted with the loss difference) at FIGURE_RUNS runs, mean over `seeds`
    of the certified ε (threshold, GDP) and of the AUC; the ideal white-box
    audit (`ideal_scores`, one canary in half the runs) over
    THREAT_IDEAL_SEEDS simulated sets of as many runs.
    """
    out = []
    game = MultiRun(FIGURE_RUNS)
    estimators = ("threshold", "gdp")

    def statistics(obs: Observations, seed: int) -> dict[str, float]:
        bounds = {e: audit_scores(obs, game=game, bound=Bound(e, delta=DELTA), seed=seed).lower_bound.epsilon
                  for e in estimators}
        return {**bounds, "AUC": _auc(obs)}

    for epsilon in EPSILONS:
        sigma = calibrate(epsilon, 100)
        config = DPSGDConfig(noise_multiplier=sigma, sample_rate=RATE, steps=100, delta=DELTA)
        ideal = []
        for seed in range(THREAT_IDEAL_SEEDS):
            rng = np.random.default_rng(seed)
            members = rng.permutation(FIGURE_RUNS) < FIGURE_RUNS // 2
            ideal.append(statistics(ideal_scores(members, sigma=sigma, q=RATE, steps=100, rng=rng), seed))
        for threat, canary, score in MULTI:
            real = [statistics(audit_dpsgd(config, game=game, canary=canary, threat=threat, scorer=score,
                                           seed=seed).observations, seed) for seed in seeds]
            for name in ideal[0]:
                values = [row[name] for row in ideal]
                out.append((epsilon, f"{threat} {canary}", name, float(np.mean([row[name] for row in real])),
                            float(np.mean(values)), float(np.std(values))))
    return out


def _table(title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]]) -> Table:
    table = Table(title=title)
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(*row)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1, help="seeds to average the ratios over (default 1)")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=PARTS, help="parts to run (default all)")
    args = parser.parse_args()
    seeds = range(args.seeds)
    import torch

    torch.set_num_threads(1)  # as the audit's own runs do: one thread a run, parallel runs on workers
    console = Console(width=120)
    if "speeds" in args.parts:
        console.print(_table(
            f"Training runs per minute (digits, q = 256/1797, 100 steps, one thread; one at a time: mean of {TIMED_RUNS} "
            "after a warm-up; side by side: one group)",
            ("trainer", "runs / minute", "× one at a time"),
            [(label, f"{rate:,.0f}", "" if ratio is None else f"{ratio:.1f}") for label, rate, ratio in speeds()]))
    if "many-runs" in args.parts:
        rows = [(str(seed), *many_runs(seed)) for seed in seeds]
        console.print(_table(
            f"{MANY_RUNS:,} training runs side by side (full batch, 10 steps, ε ≈ 8, white-box Dirac, threshold estimator, "
            "in process, one thread)",
            ("seed", "certified ε", "PLD upper ε", "certified / upper", "minutes"),
            [(seed, f"{lower:.3f}", f"{upper:.3f}", f"{lower / upper:.2f}", f"{seconds / 60:.1f}")
             for seed, lower, upper, seconds in rows]))
    if "multi-run" in args.parts:
        rows: dict[tuple[str, str, int], list[float]] = {}
        for seed in seeds:
            for label, estimator, count, ratio in multi_run_ratios(seed):
                rows.setdefault((label, estimator, count), []).append(ratio)
        console.print(_table(
            f"Certified ε / PLD upper bound, white-box Dirac canary, mean of {len(seeds)} seed(s)",
            ("setting", "estimator", "runs", "certified / upper"),
            [(label, estimator, f"{count:,}", f"{np.mean(values):.2f}") for (label, estimator, count), values in rows.items()]))
    if "one-run" in args.parts:
        console.print(_table(
            f"One MLP training run, white-box Dirac canaries: certified (mean of {len(seeds)} seed(s)) against the ideal "
            f"(mean of {IDEAL_SEEDS} simulated games)",
            ("setting", "upper ε", "canaries", "estimator", "certified", "ideal", "certified / ideal"),
            [(label, f"{upper:.2f}", f"{m:,}", estimator, f"{real:.2f}", f"{best:.2f}", f"{ratio:.2f}")
             for label, upper, m, estimator, real, best, ratio in one_run_against_ideal(seeds)]))
    if "threats" in args.parts:
        console.print(_table(
            f"docs/figures/dpsgd.png's multi-run audits ({FIGURE_RUNS} runs, logreg, Poisson, 100 steps): certified ε, "
            f"mean of {len(seeds)} seed(s), beside the ideal white-box audit over {THREAT_IDEAL_SEEDS} simulated sets",
            ("ε", "audit", "certified ε or AUC", "measured", "ideal mean", "ideal sd"),
            [(f"{epsilon:g}", audit, name, f"{real:.2f}", f"{mean:.2f}", f"{sd:.2f}")
             for epsilon, audit, name, real, mean, sd in threat_comparison(seeds)]))


if __name__ == "__main__":
    main()
