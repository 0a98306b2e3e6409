"""The pages of a report: self-contained HTML (figure as a data URI) or Markdown (figure as a sibling PNG)."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from dpaudit.errors import InvalidParameterError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["check_report_path", "figure_png", "html_page", "html_rows", "markdown_page", "png_data_uri", "write_page"]

HTML_SUFFIXES = (".html", ".htm")
MARKDOWN_SUFFIXES = (".md", ".markdown")


def _alt(heading: str) -> str:
    return heading.lower().replace(" ", "-") + " plot"


def figure_png(figure: Figure, *, dpi: int = 110) -> bytes:
    """Return `figure` drawn as PNG bytes at `dpi`."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def png_data_uri(png: bytes) -> str:
    """Return PNG bytes as a data URI, for an <img> that needs no file beside the page."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def html_rows(rows: Sequence[tuple[str, str]]) -> str:
    """Return (field, value) rows as HTML table rows, one a line, every text escaped."""
    return "\n".join(f"<tr><th>{html.escape(key)}</th><td>{html.escape(value)}</td></tr>" for key, value in rows)


def html_page(*, title: str, verdict: str, meaning: str, rows: list[tuple[str, str]], heading: str, caption: str,
              png: bytes) -> str:
    """Return a self-contained HTML report: title, verdict, meaning sentence, table, and one figure as a data URI."""
    table = html_rows(rows)
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
<img alt="{html.escape(_alt(heading))}" src="{png_data_uri(png)}">
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
