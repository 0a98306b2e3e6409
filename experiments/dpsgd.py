"""`dpsgd`: how much of DP-SGD's privacy bound an audit certifies, by threat model, game and estimator.

Logistic regression on the digits, Poisson sampling at q = 256/1797 for T
steps, σ calibrated so that dp_accounting's PLD bound is ε ≈ 2, 4 and 8 at
δ = 1e-5. For each: multi-run audits (R training runs, half with one
canary; threshold/Clopper–Pearson and GDP on the same runs) with a
white-box Dirac canary (all iterates; Nasr et al. 2023) and a black-box
crafted-input canary (final model, loss difference); one-run audits (one
training run, m canaries; Steinke, Nasr and Jagielski 2023, and the f-DP
analysis of Mahloujifar, Melis and Chaudhuri) with white-box Dirac and
black-box mislabelled canaries. Each point says how many training runs it used.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpaudit.attacks.games import MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.canaries import audit_scores
from dpaudit.audit.audits.dpsgd import audit_dpsgd
from dpaudit.audit.estimators.certify import Bound, estimators_of
from dpaudit.experiments.output import save
from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["DELTA", "NAME", "RATE", "audits", "calibrate", "run"]

NAME = "dpsgd"
DELTA = 1e-5
RATE = 256 / 1797
FULL = {"epsilons": (2.0, 4.0, 8.0), "steps": 100, "runs": 500, "canaries": 500}
QUICK = {"epsilons": (8.0,), "steps": 20, "runs": 40, "canaries": 60}
MULTI = (("white-box", "dirac", "loss"), ("black-box", "crafted", "loss-difference"))
ONE = (("white-box", "dirac", "loss"), ("black-box", "mislabelled", "loss"))


def calibrate(epsilon: float, steps: int) -> float:
    """Return the σ whose Poisson-subsampled Gaussian over `steps` steps has PLD ε = `epsilon` at δ."""
    from scipy.optimize import brentq

    return brentq(lambda s: pld_epsilon(poisson_event(s, RATE, steps), DELTA) - epsilon, 0.3, 100.0, xtol=1e-4)


def _rows(obs: Observations, game: MultiRun | OneRun, seed: int, base: dict[str, Any], claim: Any) -> list[dict[str, Any]]:
    rows = []
    for estimator in estimators_of(game):
        bound = audit_scores(obs, game=game, bound=Bound(estimator, delta=DELTA), seed=seed, claim=claim).lower_bound
        rows.append({**base, "estimator": estimator, "assumption": bound.assumption, "certified": bound.epsilon})
    return rows


def audits(cfg: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """Return one row per (ε, threat, game, estimator): the certified ε beside the PLD upper bound."""
    rows: list[dict[str, Any]] = []
    for epsilon in cfg["epsilons"]:
        sigma = calibrate(epsilon, cfg["steps"])
        config = DPSGDConfig(noise_multiplier=sigma, sample_rate=RATE, steps=cfg["steps"], delta=DELTA)
        for game, plans in ((MultiRun(cfg["runs"]), MULTI), (OneRun(cfg["canaries"]), ONE)):
            for threat, canary, score in plans:
                one_run = isinstance(game, OneRun)
                result = audit_dpsgd(config, game=game, canary=canary, threat=threat, scorer=score, seed=seed)
                base = {"epsilon": epsilon, "sigma": sigma, "upper": result.upper_bound.epsilon, "game": game.name,
                        "threat": threat, "canary": canary, "training_runs": 1 if one_run else cfg["runs"],
                        "canaries": cfg["canaries"] if one_run else 1}
                rows += _rows(result.observations, game, seed, base, result.claim)
    return rows


def _figure(rows: list[dict[str, Any]], cfg: dict[str, Any]) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(11, 4.5), layout="constrained")
    axes = figure.subplots(1, 2, sharey=True)
    for ax, kind in zip(axes, (MultiRun, OneRun)):
        game = kind.name
        for threat in ("white-box", "black-box"):
            for estimator, style in zip(estimators_of(kind), ("o-", "s--")):
                pts = [r for r in rows if r["game"] == game and r["threat"] == threat and r["estimator"] == estimator]
                label = f"{threat}, {estimator}" + (" (Gaussian assumption)" if pts and pts[0]["assumption"] else "")
                ax.plot([r["upper"] for r in pts], [r["certified"] for r in pts], style, label=label)
        top = max(cfg["epsilons"])
        ax.plot([0, top], [0, top], ":", color="gray", label="PLD upper bound")
        runs = f"{cfg['runs']} training runs" if kind is MultiRun else f"1 training run, {cfg['canaries']} canaries"
        ax.set_title(f"{game}: {runs}", fontsize=10)
        ax.set_xlabel("ε upper bound (dp_accounting PLD)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("certified ε (95%)")
    figure.suptitle(f"DP-SGD, logistic regression on digits, q = 256/1797, {cfg['steps']} steps, δ = 1e-5", fontsize=11)
    return figure


def run(out_dir: Path, *, quick: bool = False, seed: int = 0) -> dict[str, Any]:
    """Run the audits; write dpsgd.png/json into `out_dir`; return the JSON content."""
    cfg = QUICK if quick else FULL
    rows = audits(cfg, seed)
    data = {"seed": seed, "delta": DELTA, "confidence": 0.95, "sample_rate": RATE, "config": cfg, "audits": rows}
    return save(out_dir, NAME, _figure(rows, cfg), data)
