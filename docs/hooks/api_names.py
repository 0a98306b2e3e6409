"""mkdocs hook: the API page of `dpaudit.audit` renders every public name from the package's one list.

`dpaudit.audit` loads its names on first use (PEP 562), so griffe cannot see them in the package; the page
holds a marker, replaced here by one mkdocstrings block per name, at the module the name lives in.
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- every public name of dpaudit.audit -->"


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Return the page with the marker replaced by one `:::` block per name of `dpaudit.audit.__all__`."""
    if MARKER not in markdown:
        return markdown
    import dpaudit.audit as audit

    blocks = [f"::: {audit._HOMES[name]}.{name}\n" for name in audit.__all__]
    return markdown.replace(MARKER, "\n".join(blocks))
