"""Self-contained reports of one audit: HTML (plot embedded) or Markdown (plot as a sibling PNG).

A report holds the summary table (claim, theory upper bound, certified lower
bound, verdict, tightness), the evidence behind the bound (samples, held-out
counts, observed rates and their Clopper–Pearson upper bounds, seed), the
privacy-region plot (`dpaudit.audit.results.plots.plot_privacy_region`) and the exact
sentence of what the bound means (`LowerBound.meaning()`).
"""

from __future__ import annotations

import base64
import html
import io
import math
from pathlib import Path
from typing import Callable

from dp_accounting import dp_event
from dpaudit.audit.results.plots import plot_privacy_region, result_box
from dpaudit.audit.results.result import AuditResult
from dpaudit.mechanisms.errors import InvalidParameterError

HTML_SUFFIXES = (".html", ".htm")
MARKDOWN_SUFFIXES = (".md", ".markdown")


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
        ("upper bound (theory)", f"ε = {_num(upper.epsilon)} at δ = {upper.delta:g} [{upper.method}]"),
        ("lower bound (certified)", f"ε = {lower.epsilon:.4f} at δ = {lower.delta:g}, confidence {lower.confidence:g} [{lower.method}]"),
        *[("lower bound under an assumption", f"ε = {b.epsilon:.4f} [{b.method}: {b.assumption}]") for b in result.secondary],
        ("verdict", result.verdict),
        ("tightness (lower / upper)", _num(result.tightness)),
        ("test (rejection set S)", result.test or "n/a"),
        ("samples per dataset", f"{lower.trials:,}"),
    ]
    details = lower.details
    if "selection" in details:
        rows.append(("used to choose the test / held out", f"{details['selection']:,} / {details['held_out']:,}"))
    box = result_box(lower)
    if box is not None:
        rows += [
            ("false positives (outputs of D0 in S)", f"{details['false_positives']:,}"),
            ("false negatives (outputs of D1 not in S)", f"{details['false_negatives']:,}"),
            ("FPR observed / upper bound", f"{box.fpr:.6g} / {box.fpr_high:.6g}"),
            ("FNR observed / upper bound", f"{box.fnr:.6g} / {box.fnr_high:.6g}"),
        ]
    else:
        rows.append(("observed rates", f"FPR = {_num(lower.fpr)}, FNR = {_num(lower.fnr)}"))
    rows += [("seed", str(result.seed)), ("seconds", f"{result.seconds:.2f}")]
    return rows


def _plot_png(result: AuditResult, *, event: dp_event.DpEvent | None = None) -> bytes:
    """Return the privacy-region plot of `result` as PNG bytes."""
    buffer = io.BytesIO()
    plot_privacy_region(result, event=event).savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()


REGION_CAPTION = (
    "Shaded: the claimed (ε, δ) region (Kairouz, Oh, Viswanath, ICML 2015, Thm 2.1). Every test of an (ε, δ)-DP "
    "mechanism has its (FPR, FNR) inside it. The box is the Clopper–Pearson confidence box of the observed rates; "
    "its upper corner (×) is the point the certified lower bound is computed from."
)


def _alt(heading: str) -> str:
    return heading.lower().replace(" ", "-") + " plot"


def html_page(*, title: str, verdict: str, meaning: str, rows: list[tuple[str, str]], heading: str, caption: str,
              png: bytes) -> str:
    """Return a self-contained HTML report: title, verdict, meaning sentence, table, and one figure as a data URI."""
    table = "\n".join(
        f"<tr><th>{html.escape(key)}</th><td>{html.escape(value)}</td></tr>" for key, value in rows
    )
    image = base64.b64encode(png).decode("ascii")
    title = html.escape(title)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: 4px 10px; text-align: left; vertical-align: top; }}
th {{ background: #f3f3f3; font-weight: normal; }}
.meaning {{ font-size: 1.1em; padding: 0.6em 1em; background: #eef5fb; border-left: 4px solid #3182bd; }}
.verdict-violation {{ color: #b30000; font-weight: bold; }}
img {{ max-width: 100%; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p class="verdict-{html.escape(verdict)}">Verdict: {html.escape(verdict)}</p>
<p class="meaning">{html.escape(meaning)}</p>
<table>
{table}
</table>
<h2>{html.escape(heading)}</h2>
<p>{html.escape(caption)}</p>
<img alt="{html.escape(_alt(heading))}" src="data:image/png;base64,{image}">
</body>
</html>
"""


def markdown_page(*, title: str, verdict: str, meaning: str, rows: list[tuple[str, str]], heading: str, caption: str,
                  image: str) -> str:
    """Return a Markdown report; `image` is the relative path of its figure's PNG."""
    table = "\n".join(f"| {key} | {value.replace('|', '/')} |" for key, value in rows)
    return f"""# {title}

**Verdict: {verdict}.** {meaning}

| field | value |
| --- | --- |
{table}

## {heading}

![{_alt(heading)}]({image})

{caption}
"""


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


def write_page(path: str | Path, html_text: Callable[[], str], markdown_text: Callable[[str], str],
               png: Callable[[], bytes]) -> Path:
    """Write a report to `path` (.html: `html_text()`; .md: `markdown_text(image)` plus `png()` as `<stem>.png`)."""
    path = check_report_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() in HTML_SUFFIXES:
        path.write_text(html_text(), encoding="utf-8")
    else:
        image = path.with_suffix(".png")
        image.write_bytes(png())
        path.write_text(markdown_text(image.name), encoding="utf-8")
    return path


def check_report_path(path: str | Path) -> Path:
    """Return `path` as a Path, or raise `InvalidParameterError` unless it ends in .html or .md."""
    path = Path(path)
    if path.suffix.lower() not in HTML_SUFFIXES + MARKDOWN_SUFFIXES:
        raise InvalidParameterError(f"The report file must end in .html or .md; got {path.name!r} instead.")
    return path


def write_report(result: AuditResult, path: str | Path, *, event: dp_event.DpEvent | None = None) -> Path:
    """Write the report of `result` to `path` (.html: self-contained; .md: plus `<stem>.png` beside it).

    `event` (the mechanism's dp_accounting event) adds its trade-off curve to
    the plot when it is known. Returns the report's path.
    """
    return write_page(path, lambda: render_html(result, event=event),
                      lambda image: _render_markdown(result, image=image), lambda: _plot_png(result, event=event))
