"""mkdocs hook: the API page of `dpaudit.audit` renders every public name from the package's one list.

`dpaudit.audit` loads its names on first use (PEP 562), so griffe cannot see them in the package; the page
holds a marker, replaced here by one mkdocstrings block per name, at the module the name lives in, under the
sections of `dpaudit.audit._SECTIONS` (entry points first, in the order of the guides), each heading the bare name.
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- every public name of dpaudit.audit -->"


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Return the page with the marker replaced by a section per `dpaudit.audit._SECTIONS`, one `:::` block per name."""
    if MARKER not in markdown:
        return markdown
    import dpaudit.audit as audit

    sections = []
    for title, names in audit._SECTIONS.items():
        blocks = [f"::: {home}.{name}\n    options:\n      show_root_full_path: false\n      heading_level: 3\n"
                  for name, home in names.items()]
        sections.append(f"## {title}\n\n" + "\n".join(blocks))
    return markdown.replace(MARKER, "\n".join(sections))
