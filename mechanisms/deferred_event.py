"""A dp_accounting event named by its class and fields, built only when something reads it.

Importing dp_accounting takes about a second (it loads scipy.signal for its
privacy loss distributions). A built-in mechanism still states what it
does as a dp_accounting event (`Mechanism.event`), but as a `DeferredEvent`
the import waits until the event is read: the theory side computes closed
forms such as Laplace's from the named fields alone
(`dpaudit.audit.theory.upper_bound`), so a small audit never imports it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = ["UNSUPPORTED", "DeferredEvent", "deferred", "is_unsupported"]


@dataclasses.dataclass(frozen=True)
class DeferredEvent:
    """`dp_accounting.dp_event.<kind>(**fields)`, not built yet."""

    kind: str
    fields: tuple[tuple[str, Any], ...] = ()

    def field(self, name: str) -> Any:
        """Return the value of the event's field `name`."""
        return dict(self.fields)[name]

    def build(self) -> dp_event.DpEvent:
        """Return the dp_accounting event (importing dp_accounting)."""
        from dp_accounting import dp_event

        return getattr(dp_event, self.kind)(**dict(self.fields))


def deferred(kind: str, **fields: Any) -> DeferredEvent:
    """Return the `DeferredEvent` of `dp_accounting.dp_event.<kind>(**fields)`."""
    return DeferredEvent(kind, tuple(fields.items()))


UNSUPPORTED = deferred("UnsupportedDpEvent")
"""The event of a mechanism nothing is known about: its claim is then its only upper bound."""


def is_unsupported(event: Any) -> bool:
    """Return True for dp_accounting's `UnsupportedDpEvent`, built or deferred (importing dp_accounting only for a built one)."""
    if isinstance(event, DeferredEvent):
        return event.kind == UNSUPPORTED.kind
    from dp_accounting import dp_event

    return isinstance(event, dp_event.UnsupportedDpEvent)
