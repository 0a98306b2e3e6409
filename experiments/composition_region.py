"""`composition-region`: the optimal composition theorem, and mechanisms that attain it.

Reproduces Kairouz, Oh, Viswanath, "The Composition Theorem for Differential
Privacy", ICML 2015 (arXiv 1311.0776): Figure 2 (the privacy regions of the
k-fold composition of (0.4, δ)-DP mechanisms, k = 1..5, δ ∈ {0, 0.1}; Thm 3.3)
and Figure 3 (30-fold composition of (0.1, 0.001)-DP: ε(δ) by basic, advanced
and optimal composition). The empirical points are the (FPR, FNR) of the
likelihood-ratio threshold tests on k-fold randomized response (with a δ
atom, KOV's worst case) and k-fold geometric noise, which has the same
privacy loss as randomized response: they land on the optimal region's
vertices. Every box holds simultaneously with confidence 0.95 (union bound
over the thresholds of one panel line), so the best ε over them is certified.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

import numpy as np
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.results.plots import GRID, RateBox
from dpaudit.audit.results.tradeoffs import kov_tradeoff
from dpaudit.audit.theory.composition import advanced_composition, basic_composition, kov_closed_form, kov_epsilon
from dpaudit.experiments.output import save
from dpaudit.experiments.threshold_tests import certified_epsilon, threshold_boxes
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.builtins.geometric import discrete_laplace
from dpaudit.mechanisms.neighbours import categories_in

__all__ = ["NAME", "figure3_curves", "kfold_geometric", "run", "thresholds"]

NAME = "composition-region"
EPSILON = 0.4
KS = (1, 2, 3, 4, 5)
DELTAS = (0.0, 0.1)
FIG3 = {"epsilon": 0.1, "delta": 0.001, "k": 30}
BETA = 0.05
REVEAL = 1000.0
PAIR = (np.array([0]), np.array([1]))
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")


def _rr_with_atom(*, epsilon: float, delta: float, k: int) -> Mechanism:
    """Return k-fold binary randomized response with a δ atom on one bit: KOV's worst (ε, δ) mechanism.

    Each of the k reports reveals the bit (as 2 + bit) with probability δ,
    else is ε-randomized response of it; exactly (ε, δ)-DP per report, and
    the k-fold composition attains the optimal region (KOV Thm 3.3).
    """
    from dp_accounting import dp_event
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    keep = 1.0 / (1.0 + math.exp(-epsilon))

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        bit = int(data[0])
        reveal = rng.random((size, k)) < delta
        report = np.where(rng.random((size, k)) < keep, bit, 1 - bit)
        return np.where(reveal, 2 + bit, report)

    return Mechanism(
        name=f"{k}-fold randomized response ({epsilon:g}, {delta:g})",
        sampler=sample,
        claim=Claim(*basic_composition(epsilon=epsilon, delta=delta, k=k), Relation.REPLACE_ONE),
        event=dp_event.SelfComposedDpEvent(EpsilonDeltaDpEvent(epsilon, delta), k),
        default_pair=PAIR,
        neighbours=categories_in(2),
        params={"epsilon": epsilon, "delta": delta, "k": k},
    )


def kfold_geometric(*, epsilon: float, k: int) -> Mechanism:
    """Return k independent geometric-noise releases of one bit (sensitivity 1): k-fold ε-DP.

    Its privacy loss is ±ε per release, as for randomized response, so it
    attains the same optimal region.
    """
    from dp_accounting import dp_event
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return int(data[0]) + discrete_laplace(epsilon, (size, k), rng)

    return Mechanism(
        name=f"{k}-fold geometric ({epsilon:g})",
        sampler=sample,
        claim=Claim(k * epsilon, 0.0, Relation.REPLACE_ONE),
        event=dp_event.SelfComposedDpEvent(EpsilonDeltaDpEvent(epsilon, 0.0), k),
        default_pair=PAIR,
        neighbours=categories_in(2),
        params={"epsilon": epsilon, "k": k},
    )


def _rr_score(outputs: np.ndarray) -> np.ndarray:
    """Return the likelihood-ratio order of k-fold RR outputs: ones counted, ±REVEAL for a revealed bit."""
    plain = np.count_nonzero(outputs == 1, axis=1)
    return plain + REVEAL * np.any(outputs == 3, axis=1) - REVEAL * np.any(outputs == 2, axis=1)


def _geometric_score(outputs: np.ndarray) -> np.ndarray:
    """Return the likelihood-ratio order of k-fold geometric outputs: how many are ≥ 1."""
    return np.count_nonzero(outputs >= 1, axis=1).astype(float)


def thresholds(k: int, delta: float) -> list[float]:
    """Return the thresholds whose tests are the vertices of the composed region."""
    inner = [float(j) for j in range(1, k + 1)]
    return [-REVEAL / 2, *inner, REVEAL / 2] if delta > 0 else inner


def _empirical_boxes(mech: Mechanism, score: Callable[[np.ndarray], np.ndarray], cuts: list[float], n: int,
                    rng: np.random.Generator) -> list[RateBox]:
    """Return the rate boxes of the threshold tests on `n` fresh outputs per dataset."""
    out0, out1 = mech.sample(PAIR[0], n, rng), mech.sample(PAIR[1], n, rng)
    return threshold_boxes(score(out0), score(out1), cuts, beta=BETA)


def figure3_curves(deltas: np.ndarray) -> dict[str, list[float]]:
    """Return ε at each total δ for 30-fold (0.1, 0.001)-DP: basic, advanced, KOV closed form, optimal."""
    eps, dlt, k = FIG3["epsilon"], FIG3["delta"], FIG3["k"]
    base_eps, base_delta = basic_composition(epsilon=eps, delta=dlt, k=k)
    slack = 1.0 - (1.0 - dlt) ** k
    curves: dict[str, list[float]] = {"basic": [], "advanced": [], "kov_closed_form": [], "optimal": []}
    for total in deltas:
        curves["basic"].append(base_eps if total >= base_delta else math.inf)
        spare = total - k * dlt
        curves["advanced"].append(
            advanced_composition(epsilon=eps, delta=dlt, k=k, delta_prime=spare)[0] if spare > 0 else math.inf)
        spare_kov = 1.0 - (1.0 - total) / (1.0 - slack)
        curves["kov_closed_form"].append(
            kov_closed_form(epsilon=eps, delta=dlt, k=k, delta_prime=spare_kov)[0] if spare_kov > 0 else math.inf)
        curves["optimal"].append(kov_epsilon(epsilon=eps, delta=dlt, k=k, target_delta=float(total)))
    return curves


def _plot_regions(ax, delta: float, rows: list[dict[str, Any]]) -> None:
    for k, color, row in zip(KS, COLORS, rows):
        curve = kov_tradeoff(GRID, epsilon=EPSILON, delta=delta, k=k)
        ax.plot(GRID, curve, color=color, linewidth=1.3, label=f"k = {k}")
        ax.plot(GRID, 1.0 - kov_tradeoff(1.0 - GRID, epsilon=EPSILON, delta=delta, k=k), color=color, linewidth=1.3)
        for key, marker in (("rr_boxes", "o"), ("geometric_boxes", "s")):
            for box in row.get(key, []):
                ax.errorbar(box["fpr"], box["fnr"], xerr=[[box["fpr"] - box["fpr_low"]], [box["fpr_high"] - box["fpr"]]],
                            yerr=[[box["fnr"] - box["fnr_low"]], [box["fnr_high"] - box["fnr"]]], color=color,
                            marker=marker, markersize=3.5, linestyle="none", mfc="none" if marker == "s" else color)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("FPR")
    ax.set_ylabel("FNR")
    ax.grid(True, alpha=0.3)
    ax.set_title(f"k-fold ({EPSILON:g}, {delta:g})-DP: optimal region (KOV Fig. 2)", fontsize=9)


def _plot_figure3(ax, deltas: np.ndarray, curves: dict[str, list[float]], grid: np.ndarray, certified: list[float]) -> None:
    from matplotlib.ticker import NullFormatter

    styles = {"basic": ("basic (Dwork et al. 2006)", "--"), "advanced": ("advanced (Dwork, Rothblum, Vadhan)", "-."),
              "kov_closed_form": ("KOV closed form (Thm 3.4)", ":"), "optimal": ("optimal (KOV Thm 3.3)", "-")}
    for key, (label, style) in styles.items():
        values = np.asarray(curves[key], dtype=float)
        ax.plot(deltas, np.where(np.isfinite(values), values, np.nan), linestyle=style, linewidth=1.5, label=label)
    ax.plot(grid, certified, "o", color="black", markersize=4, label="certified lower bound (30-fold RR)")
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ticks = [0.03, 0.05, 0.1, 0.2, 0.5]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_ylim(0, 3.6)
    ax.set_xlabel("total δ")
    ax.set_ylabel("ε")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper right")
    ax.set_title("30-fold (0.1, 0.001)-DP: ε(δ) (KOV Fig. 3)", fontsize=9)


def run(out_dir: Path, *, quick: bool = False, seed: int = 0) -> dict[str, Any]:
    """Run the experiment; write composition-region.png/json into `out_dir` and return the JSON content."""
    from matplotlib.figure import Figure

    rng = np.random.default_rng(seed)
    n = 100_000 if quick else 2_000_000
    audit_trials = 50_000 if quick else 1_000_000
    regions: dict[str, list[dict[str, Any]]] = {}
    for delta in DELTAS:
        rows = []
        for k in KS:
            total = 1.0 - (1.0 - delta) ** k  # the least δ with finite ε; there ε = kε (KOV Thm 3.3, i = 0)
            rr = _rr_with_atom(epsilon=EPSILON, delta=delta, k=k)
            boxes = _empirical_boxes(rr, _rr_score, thresholds(k, delta), n, rng)
            row: dict[str, Any] = {
                "k": k, "delta_total": total, "optimal_epsilon": k * EPSILON,
                "rr_boxes": [b.to_dict() for b in boxes], "rr_certified": certified_epsilon(boxes, total),
            }
            if delta == 0.0:
                geo = kfold_geometric(epsilon=EPSILON, k=k)
                geo_boxes = _empirical_boxes(geo, _geometric_score, thresholds(k, 0.0), n, rng)
                row["geometric_boxes"] = [b.to_dict() for b in geo_boxes]
                row["geometric_certified"] = certified_epsilon(geo_boxes, 0.0)
                row["rr_audit"] = audit_mechanism(rr, trials=audit_trials, seed=seed).to_dict()
                row["geometric_audit"] = audit_mechanism(geo, trials=audit_trials, seed=seed).to_dict()
            rows.append(row)
        regions[f"{delta:g}"] = rows

    deltas = np.geomspace(0.0297, 0.5, 200)
    curves = figure3_curves(deltas)
    k3 = FIG3["k"]
    big = _rr_with_atom(epsilon=FIG3["epsilon"], delta=FIG3["delta"], k=k3)
    boxes30 = _empirical_boxes(big, _rr_score, thresholds(k3, FIG3["delta"]), n, rng)
    grid = np.geomspace(0.031, 0.4, 9)
    certified = [certified_epsilon(boxes30, float(d)) for d in grid]
    optimal_at_grid = [kov_epsilon(epsilon=FIG3["epsilon"], delta=FIG3["delta"], k=k3, target_delta=float(d)) for d in grid]

    figure = Figure(figsize=(15, 5.2), layout="constrained")
    axes = figure.subplots(1, 3)
    for ax, delta in zip(axes[:2], DELTAS):
        _plot_regions(ax, delta, regions[f"{delta:g}"])
    axes[0].legend(fontsize=7, loc="upper right", title="lines: optimal region\n● RR  □ geometric", title_fontsize=7)
    axes[1].legend(fontsize=7, loc="upper right", title="● RR with δ atom", title_fontsize=7)
    _plot_figure3(axes[2], deltas, curves, grid, certified)
    data = {
        "epsilon": EPSILON, "ks": list(KS), "deltas": list(DELTAS), "samples_per_dataset": n, "seed": seed,
        "confidence": 1.0 - BETA, "regions": regions,
        "figure3": {**FIG3, "total_delta": deltas, "curves": curves, "certified_delta": grid,
                    "certified_epsilon": certified, "optimal_epsilon": optimal_at_grid},
    }
    return save(out_dir, NAME, figure, data)
