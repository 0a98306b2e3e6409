"""The privacy-region plot of an audit, in the style of Kairouz, Oh, Viswanath's Figure 1.

A test's (FPR, FNR) must lie in the (ε, δ) privacy region
{FPR + e^ε FNR ≥ 1 − δ, e^ε FPR + FNR ≥ 1 − δ, and the same for the
complementary test} (Kairouz, Oh, Viswanath, ICML 2015, Thm 2.1). The plot
shades the claimed region, draws the mechanism's own trade-off curve where it
is known, and the observed point with its Clopper–Pearson box; the box's
upper corner (both rates at their upper confidence bounds) is what the
certified lower bound uses, so it lies outside the claimed region exactly
when the verdict is "violation". Figures are made with `matplotlib.figure.Figure`
(Agg canvas), never pyplot, so no global state is touched.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from dpaudit.attacks.held_out_counts import HeldOutCounts
from dpaudit.audit.estimators.clopper_pearson import rate_upper_bound
from dpaudit.audit.results.tradeoffs import TradeOff, event_tradeoff
from dpaudit.audit.theory.profiles import epsilon_delta_tradeoff

if TYPE_CHECKING:
    from dp_accounting import dp_event
    from dpaudit.audit.results.result import AuditResult
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["GRID", "RateBox", "plot_privacy_region", "rate_box", "region_bounds", "result_box"]

GRID = np.linspace(0.0, 1.0, 2001)
CLAIM_COLOR = "#9ecae1"
POINT_COLOR = "#d62728"
CURVE_COLOR = "black"


@dataclasses.dataclass(frozen=True)
class RateBox:
    """Observed FPR and FNR of one fixed test with one-sided Clopper–Pearson limits at β/2 each.

    `corner` = (fpr_high, fnr_high) are the upper confidence bounds that the
    certified ε lower bound is computed from (`epsilon_lower_bound`).
    """

    fpr: float
    fnr: float
    fpr_low: float
    fpr_high: float
    fnr_low: float
    fnr_high: float

    @property
    def corner(self) -> tuple[float, float]:
        """Return (FPR upper bound, FNR upper bound), the point the certified bound uses."""
        return self.fpr_high, self.fnr_high

    def to_dict(self) -> dict[str, float]:
        """Return the box as a JSON-ready dict."""
        return dataclasses.asdict(self)


def rate_box(false_positives: int, n0: int, false_negatives: int, n1: int, *, beta: float) -> RateBox:
    """Return the rates `false_positives`/`n0`, `false_negatives`/`n1` with Clopper–Pearson limits.

    Each limit is one-sided at level β/2 (the split `epsilon_lower_bound` uses),
    so the upper corner is exactly the pair of bounds behind the certified ε.
    """
    from statsmodels.stats.proportion import proportion_confint

    fp_low, _ = proportion_confint(false_positives, n0, alpha=beta, method="beta")
    fn_low, _ = proportion_confint(false_negatives, n1, alpha=beta, method="beta")
    return RateBox(
        fpr=false_positives / n0,
        fnr=false_negatives / n1,
        fpr_low=float(np.nan_to_num(fp_low)),
        fpr_high=float(rate_upper_bound(false_positives, n0, beta / 2)),
        fnr_low=float(np.nan_to_num(fn_low)),
        fnr_high=float(rate_upper_bound(false_negatives, n1, beta / 2)),
    )


def result_box(result: AuditResult) -> RateBox | None:
    """Return the `RateBox` of a two-dataset result from its held-out counts, or None without them.

    The box is that of the two-rates interval; for a result of the ratio
    interval its corner certifies less than the bound reported.
    """
    e = result.evidence
    if not isinstance(e, HeldOutCounts):
        return None
    return rate_box(e.false_positives, e.n0, e.false_negatives, e.n1, beta=1.0 - result.lower_bound.confidence)


def region_bounds(epsilon: float, delta: float, alpha: np.ndarray = GRID) -> tuple[np.ndarray, np.ndarray]:
    """Return the lower and upper FNR boundaries of the (ε, δ) privacy region at FPRs `alpha`."""
    lower = epsilon_delta_tradeoff(alpha, epsilon=epsilon, delta=delta)
    upper = 1.0 - epsilon_delta_tradeoff(1.0 - alpha, epsilon=epsilon, delta=delta)
    return lower, upper


def _draw_region(ax: Axes, epsilon: float, delta: float, *, label: str, color: str = CLAIM_COLOR, fill: bool = True,
                linestyle: str = "-") -> None:
    """Draw the (ε, δ) privacy region on `ax`: filled, or as its boundary only."""
    lower, upper = region_bounds(epsilon, delta)
    if fill:
        ax.fill_between(GRID, lower, upper, color=color, alpha=0.45, linewidth=0, label=label)
        ax.plot(GRID, lower, color=color, linewidth=1.2)
        ax.plot(GRID, upper, color=color, linewidth=1.2)
    else:
        ax.plot(GRID, lower, color=color, linewidth=1.4, linestyle=linestyle, label=label)
        ax.plot(GRID, upper, color=color, linewidth=1.4, linestyle=linestyle)


def _draw_tradeoff(ax: Axes, curve: TradeOff, *, label: str, color: str = CURVE_COLOR, linestyle: str = "-") -> None:
    """Draw a symmetric trade-off curve f and its mirror 1 − f(1 − α) on `ax`."""
    ax.plot(GRID, curve(GRID), color=color, linewidth=1.4, linestyle=linestyle, label=label)
    ax.plot(GRID, 1.0 - curve(1.0 - GRID), color=color, linewidth=1.4, linestyle=linestyle)


def _draw_box(ax: Axes, box: RateBox, *, label: str, color: str = POINT_COLOR, marker: str = "o") -> None:
    """Draw an observed (FPR, FNR) point, its confidence box, and the box's certified corner."""
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((box.fpr_low, box.fnr_low), box.fpr_high - box.fpr_low, box.fnr_high - box.fnr_low,
                           facecolor=color, alpha=0.25, edgecolor=color, linewidth=1.0))
    ax.plot([box.fpr], [box.fnr], marker=marker, color=color, linestyle="none", markersize=5, label=label)
    ax.plot([box.fpr_high], [box.fnr_high], marker="x", color=color, linestyle="none", markersize=6)


def _style(ax: Axes, title: str, limits: tuple[float, float, float, float] = (0.0, 1.0, 0.0, 1.0)) -> None:
    ax.set_xlim(limits[0], limits[1])
    ax.set_ylim(limits[2], limits[3])
    ax.set_xlabel("FPR = P[M(D0) ∈ S]")
    ax.set_ylabel("FNR = P[M(D1) ∉ S]")
    ax.set_title(title, fontsize=10, parse_math=False)
    ax.grid(True, alpha=0.3)


def _zoom(box: RateBox) -> tuple[float, float, float, float]:
    """Return a square window around the box, at least 0.02 wide, inside the unit square."""
    half = max(2.5 * (box.fpr_high - box.fpr_low), 2.5 * (box.fnr_high - box.fnr_low), 0.01)
    cx, cy = (box.fpr_low + box.fpr_high) / 2.0, (box.fnr_low + box.fnr_high) / 2.0
    x0 = min(max(cx - half, 0.0), 1.0 - 2 * half)
    y0 = min(max(cy - half, 0.0), 1.0 - 2 * half)
    return max(x0, 0.0), min(x0 + 2 * half, 1.0), max(y0, 0.0), min(y0 + 2 * half, 1.0)


def _draw_result(ax: Axes, result: AuditResult, box: RateBox | None, curve: tuple[TradeOff, str] | None) -> None:
    claim, lower, upper = result.claim, result.lower_bound, result.upper_bound
    _draw_region(ax, claim.epsilon, claim.delta, label=f"claimed ({claim.epsilon:.4g}, {claim.delta:g})-DP region")
    if math.isfinite(upper.epsilon) and abs(upper.epsilon - claim.epsilon) > 1e-3 * max(1.0, claim.epsilon):
        _draw_region(ax, upper.epsilon, upper.delta, fill=False, color="#2ca02c", linestyle="--",
                    label=f"theory upper bound ε = {upper.epsilon:.4g} [{upper.method}]")
    if curve is not None:
        _draw_tradeoff(ax, curve[0], label=curve[1])
    if lower.epsilon > 0:
        _draw_region(ax, lower.epsilon, lower.delta, fill=False, color=POINT_COLOR, linestyle=":",
                    label=f"certified lower bound ε = {lower.epsilon:.4g}")
    if box is not None:
        _draw_box(ax, box, label=f"observed (FPR, FNR), {lower.confidence:g} box (× = corner used)")


def plot_privacy_region(result: AuditResult, path: str | Path | None = None, ax: Axes | None = None, *,
                        event: dp_event.DpEvent | None = None) -> Figure:
    """Return (and save to `path`, PNG) the privacy-region plot of `result`.

    Draws the claimed (ε, δ) region, the theory upper bound's region when it
    differs from the claim, the trade-off curve of `event` when it is a
    Laplace, Gaussian or randomized-response event, the certified lower
    bound's region boundary, and the observed point with its
    Clopper–Pearson box. Without `ax`, the figure has a second panel zoomed
    on the observed point; with `ax`, only the full square is drawn into it.
    """
    from matplotlib.figure import Figure

    box = result_box(result)
    curve = None if event is None else event_tradeoff(event, relation=result.claim.relation.value)
    title = f"{result.mechanism}: {result.verdict}, ε_lower = {result.lower_bound.epsilon:.4g}"
    if ax is not None:
        figure = ax.figure
        _draw_result(ax, result, box, curve)
        _style(ax, title)
    else:
        figure = Figure(figsize=(11, 6.0), layout="constrained")
        full, zoom = figure.subplots(1, 2)
        _draw_result(full, result, box, curve)
        _style(full, title)
        full.set_aspect("equal")
        figure.legend(*full.get_legend_handles_labels(), loc="outside lower center", ncols=3, fontsize=8)
        if box is not None:
            _draw_result(zoom, result, box, curve)
            _style(zoom, "zoom on the observed point", _zoom(box))
            zoom.set_aspect("equal")
        else:
            zoom.set_visible(False)
    if path is not None:
        figure.savefig(path, dpi=120)
    return figure
