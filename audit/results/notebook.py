"""Results in Jupyter: the HTML a result shows of itself (`_repr_html_`), after statsmodels' HTML summary tables.

A result's cell output is its verdict, the table that `summary()` prints
(the same rows), the sentence of what the bound means and, where the result
has one, its plot inline as a PNG data URI. Every text is escaped, so a
mechanism named `<script>` shows as written. Nothing here imports matplotlib:
the caller draws the figure, and only when the HTML is asked for.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Sequence

from dpaudit.audit.results.pages import figure_png, html_rows, png_data_uri

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["DPI", "STYLE", "result_html", "table_html"]

DPI = 80
"""Resolution of an inline plot: the privacy-region figure is then 880 pixels wide, about a notebook's width."""

STYLE = """<style scoped>
.dpaudit-result th, .dpaudit-result td { text-align: left; vertical-align: top; }
.dpaudit-result .verdict { font-weight: bold; }
.dpaudit-result .flagged { color: #b30000; }
</style>"""
"""Left-aligned cells and a red verdict for a violation, scoped to the result's own <div> (as pandas does)."""


def _fragment(verdict: str, flagged: bool, parts: Sequence[str]) -> str:
    """Return the result's <div>: its style, the verdict line (red when `flagged`), then `parts`."""
    kind = "verdict flagged" if flagged else "verdict"
    line = f'<p>Verdict: <span class="{kind}">{html.escape(verdict)}</span></p>'
    return "\n".join(['<div class="dpaudit-result">', STYLE, line, *parts, "</div>"])


def _image(figure: Figure, alt: str) -> str:
    """Return `figure` as an <img> holding its PNG as a data URI."""
    uri = png_data_uri(figure_png(figure, dpi=DPI))
    return f'<img alt="{html.escape(alt)}" style="max-width:100%" src="{uri}">'


def result_html(*, title: str, verdict: str, flagged: bool, meaning: str, rows: Sequence[tuple[str, str]],
                figure: Figure | None) -> str:
    """Return one result as an HTML fragment: verdict, (field, value) table titled `title`, `meaning`, `figure` inline."""
    table = f"<table>\n<caption>{html.escape(title)}</caption>\n{html_rows(rows)}\n</table>"
    parts = [table, f"<p>{html.escape(meaning)}</p>"]
    if figure is not None:
        parts.append(_image(figure, f"plot of {title}"))
    return _fragment(verdict, flagged, parts)


def table_html(*, title: str, verdict: str, flagged: bool, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Return a table of results as an HTML fragment: verdict, then `columns` over `rows` under the caption `title`."""
    head = "<tr>" + "".join(f"<th>{html.escape(column)}</th>" for column in columns) + "</tr>"
    body = "\n".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    table = f"<table>\n<caption>{html.escape(title)}</caption>\n<thead>{head}</thead>\n<tbody>\n{body}\n</tbody>\n</table>"
    return _fragment(verdict, flagged, [table])
