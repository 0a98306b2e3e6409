"""Results and reports: the frozen result objects, their tables, HTML/Markdown reports and plots."""

__all__: list[str] = []
