"""Reports of a membership audit (canary, one-run or tracing): table, score histograms and ROC curve.

The ROC panel draws the empirical true- against false-positive rate of
thresholds on the scores, on log axes, beside the line TPR = e^ε·FPR + δ of
the claim: an (ε, δ)-DP mechanism keeps every test below it (Kairouz, Oh,
Viswanath, ICML 2015, Thm 2.1). The curve is descriptive (it is fitted and
read on the same scores); the certified bound in the table is not.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from dpaudit.audit.results.pages import figure_png, html_page, markdown_page, write_page

if TYPE_CHECKING:
    from dpaudit.audit.results.result import MembershipResult
    from matplotlib.figure import Figure

__all__ = ["score_figure", "write_score_report"]

CAPTION = (
    "Left: the scores of members (IN) and non-members (OUT). Right: the empirical ROC of thresholds on the score "
    "(descriptive, read on the same scores) and the line TPR = e^ε·FPR + δ of the claim, which every test of an "
    "(ε, δ)-DP mechanism stays below (Kairouz, Oh, Viswanath, ICML 2015, Thm 2.1)."
)


def _roc(in_scores: np.ndarray, out_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (FPR, TPR) of the rules "score > t" for every observed t."""
    thresholds = np.unique(np.concatenate([in_scores, out_scores]))
    fpr = 1.0 - np.searchsorted(np.sort(out_scores), thresholds, side="right") / out_scores.size
    tpr = 1.0 - np.searchsorted(np.sort(in_scores), thresholds, side="right") / in_scores.size
    return fpr, tpr


def _bins(scores: np.ndarray) -> np.ndarray:
    """Return 61 histogram edges spanning the finite scores (±inf scores have no place on a finite axis)."""
    finite = scores[np.isfinite(scores)]
    return np.histogram_bin_edges(finite if finite.size else np.zeros(1), bins=60)


def score_figure(result: MembershipResult) -> Figure:
    """Return the figure of `result`: IN/OUT score histograms and the ROC curve beside the claim's line."""
    from matplotlib.figure import Figure

    obs = result.observations
    figure = Figure(figsize=(11.5, 4.4), layout="constrained")
    left, right = figure.subplots(1, 2)
    if obs is None or obs.n_in == 0 or obs.n_out == 0:
        left.text(0.5, 0.5, "no scores of both kinds", ha="center")
        return figure
    bins = _bins(obs.scores)
    shown = np.clip(obs.scores, bins[0], bins[-1])  # ±inf scores drawn in the end bins
    left.hist(shown[~obs.truth], bins=bins, alpha=0.6, color="#1f77b4", label=f"OUT ({obs.n_out:,})")
    left.hist(shown[obs.truth], bins=bins, alpha=0.6, color="#d62728", label=f"IN ({obs.n_in:,})")
    left.set_xlabel(f"score [{result.scorer}]", parse_math=False)
    left.set_ylabel("count")
    left.legend(fontsize=8)
    fpr, tpr = _roc(obs.in_scores, obs.out_scores)
    keep = fpr > 0
    floor = 0.5 / obs.n_in
    right.loglog(fpr[keep], np.maximum(tpr[keep], floor), "-", color="#d62728", label="empirical ROC")
    right.set_ylim(floor, 1.5)
    grid = np.geomspace(1.0 / obs.n_out, 1.0, 200)
    right.loglog(grid, grid, ":", color="gray", label="chance")
    if result.claim is not None:
        bound = np.minimum(1.0, np.exp(result.claim.epsilon) * grid + result.claim.delta)
        right.loglog(grid, bound, "--", color="black", label=f"claim: e^{result.claim.epsilon:g}·FPR + δ")
    right.set_xlabel("false-positive rate")
    right.set_ylabel("true-positive rate")
    right.legend(fontsize=8, loc="lower right")
    right.grid(True, which="both", alpha=0.3)
    figure.suptitle(result.title, fontsize=10, parse_math=False)
    return figure


def _png(result: MembershipResult) -> bytes:
    return figure_png(score_figure(result))


def write_score_report(result: MembershipResult, path: str | Path) -> Path:
    """Write the report of a membership audit to `path` (.html self-contained; .md with `<stem>.png`); return it."""
    page = {"title": f"dpaudit report: {result.title.removeprefix('dpaudit ')}",
            "verdict": result.verdict or "n/a (no claim)", "meaning": result.lower_bound.meaning(),
            "rows": result.rows(), "heading": "Scores", "caption": CAPTION}
    return write_page(path, lambda: html_page(**page, png=_png(result)),
                      lambda image: markdown_page(**page, image=image), lambda: _png(result))
