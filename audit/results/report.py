"""Self-contained reports of one audit: HTML (plot embedded) or Markdown (plot as a sibling PNG).

A report holds the summary table (claim, theory upper bound, certified lower
bound, verdict, tightness), the evidence behind the bound (samples, held-out
counts, observed rates and their Clopper–Pearson upper bounds, seed), the
privacy-region plot (`dpaudit.audit.results.plots.plot_privacy_region`) and the exact
sentence of what the bound means (`LowerBound.meaning()`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from dpaudit.audit.results.pages import figure_png, html_page, markdown_page, write_page
from dpaudit.audit.results.plots import plot_privacy_region, result_box
from dpaudit.audit.results.render import upper_bound_text
from dpaudit.audit.results.result import AuditResult, Result
from dpaudit.audit.results.score_report import write_score_report

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = ["render_html", "write_report"]


def _num(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "n/a"
    return "∞" if math.isinf(x) else f"{x:.{digits}g}"


def _summary_rows(result: AuditResult) -> list[tuple[str, str]]:
    """Return the report's table as (field, value) rows: verdict, bounds, evidence and provenance."""
    claim, upper, lower = result.claim, result.upper_bound, result.lower_bound
    rows = [
        ("mechanism", result.mechanism),
        ("parameters", ", ".join(f"{k} = {v}" for k, v in result.params.items()) or "none"),
        ("claim", claim.describe()),
        ("upper bound (theory)", upper_bound_text(upper)),
        ("lower bound (certified)", f"ε = {lower.epsilon:.4f} at δ = {lower.delta:g}, confidence {lower.confidence:g} [{lower.method}]"),
        *[("lower bound under an assumption", f"ε = {b.epsilon:.4f} [{b.method}: {b.assumption}]") for b in result.beside],
        ("verdict", result.verdict),
        ("tightness (lower / upper)", _num(result.tightness)),
        ("test (rejection set S)", result.test or "n/a"),
        ("samples per dataset", f"{lower.trials:,}"),
    ]
    if result.phases is not None:
        rows.append(("used to choose the test / held out", f"{result.phases.selection:,} / {result.phases.held_out:,}"))
    box = result_box(result)
    if box is not None:
        rows += [
            ("false positives (outputs of D0 in S)", f"{result.evidence.false_positives:,}"),
            ("false negatives (outputs of D1 not in S)", f"{result.evidence.false_negatives:,}"),
            ("FPR observed / upper bound", f"{box.fpr:.6g} / {box.fpr_high:.6g}"),
            ("FNR observed / upper bound", f"{box.fnr:.6g} / {box.fnr_high:.6g}"),
        ]
    else:
        rows.append(("observed rates", f"FPR = {_num(lower.fpr)}, FNR = {_num(lower.fnr)}"))
    rows += [("seed", str(result.seed)), ("seconds", f"{result.seconds:.2f}")]
    return rows


def _plot_png(result: AuditResult, *, event: dp_event.DpEvent | None = None) -> bytes:
    """Return the privacy-region plot of `result` as PNG bytes."""
    return figure_png(plot_privacy_region(result, event=event))


REGION_CAPTION = (
    "Shaded: the claimed (ε, δ) region (Kairouz, Oh, Viswanath, ICML 2015, Thm 2.1). Every test of an (ε, δ)-DP "
    "mechanism has its (FPR, FNR) inside it. The box is the Clopper–Pearson confidence box of the observed rates; "
    "its upper corner (×) is the point the certified lower bound is computed from."
)


def render_html(result: AuditResult, *, event: dp_event.DpEvent | None = None) -> str:
    """Return a self-contained HTML page: title, meaning sentence, table, and the plot as a data URI."""
    return html_page(title=f"dpaudit report: {result.mechanism}", verdict=result.verdict,
                     meaning=result.lower_bound.meaning(), rows=_summary_rows(result), heading="Privacy region",
                     caption=REGION_CAPTION, png=_plot_png(result, event=event))


def _render_markdown(result: AuditResult, *, image: str) -> str:
    """Return the Markdown report; `image` is the relative path of the plot's PNG."""
    return markdown_page(title=f"dpaudit report: {result.mechanism}", verdict=result.verdict,
                         meaning=result.lower_bound.meaning(), rows=_summary_rows(result), heading="Privacy region",
                         caption=REGION_CAPTION, image=image)


def write_report(result: Result, path: str | Path, *, event: dp_event.DpEvent | None = None) -> Path:
    """Write the report of any audit's `result` to `path` (.html: self-contained; .md: plus `<stem>.png` beside it).

    Two-dataset audits get the privacy-region plot (with `event`'s trade-off
    curve when the mechanism's dp_accounting event is known); membership
    audits their score histograms and ROC. Returns the report's path.
    """
    if not isinstance(result, AuditResult):
        return write_score_report(result, path)
    return write_page(path, lambda: render_html(result, event=event),
                      lambda image: _render_markdown(result, image=image), lambda: _plot_png(result, event=event))
