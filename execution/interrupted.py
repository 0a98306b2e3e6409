"""The one interruption of every audit: Ctrl-C (or a time limit) with what had finished."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["Interrupted"]


class Interrupted(KeyboardInterrupt):
    """An audit stopped before its end, carrying what finished.

    `partial` is what the layer that raised could still give: a bound from
    the held-out chunks that finished (a `Result`; its trials are fresh
    samples and when to stop did not depend on them, so it stays sound),
    the counts of those chunks inside the execution layer, or None.
    `done` of `total` units (trials per dataset, or training runs) were
    finished; `store` is the run store that keeps them, when there is one.
    """

    def __init__(self, partial: Any = None, *, done: int = 0, total: int | None = None, store: Path | None = None) -> None:
        super().__init__()
        self.partial, self.done, self.total, self.store = partial, done, total, store
