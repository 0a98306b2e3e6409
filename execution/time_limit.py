"""`--timeout SECONDS`: stop an audit whose mechanism hangs, keeping the trials that finished.

The limit is an interval timer (SIGALRM, Unix, main thread) whose handler
raises `TimeLimit`, a `KeyboardInterrupt`, so the audit stops exactly as on
Ctrl-C: chunks that finished are kept and give a sound bound (where to stop
did not depend on their counts).
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
from typing import Any, Iterator

from dpaudit.errors import InvalidParameterError

__all__ = ["Limit", "TimeLimit", "time_limit"]


class TimeLimit(KeyboardInterrupt):
    """The audit ran past its time limit."""


@dataclasses.dataclass
class Limit:
    """Whether the time limit of `seconds` expired."""

    seconds: float | None
    expired: bool = False


@contextlib.contextmanager
def time_limit(limit: Limit) -> Iterator[None]:
    """Raise `TimeLimit` in the block after `limit.seconds` of wall time and mark `limit` expired (no limit when None)."""
    if limit.seconds is None:
        yield
        return
    if not limit.seconds > 0 or not hasattr(signal, "setitimer"):
        raise InvalidParameterError(
            f"The --timeout must be a positive number of seconds, on a Unix system; got {limit.seconds!r}."
        )

    def expire(signum: int, frame: Any) -> None:
        limit.expired = True
        raise TimeLimit()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit.seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
