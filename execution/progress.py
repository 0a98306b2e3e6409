"""A progress bar for audits: trials done of the total, rate and time left, shown only when useful.

The bar is a `rich.progress.Progress` on stderr. It appears only once the
audit has run for `SHOW_AFTER` seconds, so short audits print nothing extra,
and only when asked (the CLI asks unless `--quiet` or stderr is not a
terminal); the library itself stays quiet.
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Callable, Iterator, TextIO, Union

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
from rich.text import Text

__all__ = ["DelayedBar", "compact", "progress_of", "trial_progress", "wanted"]

SHOW_AFTER = 1.0


def compact(count: float) -> str:
    """Return `count` in three significant figures with a k/M/G suffix (12.3M)."""
    for suffix, unit in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if count >= unit:
            return f"{count / unit:.3g}{suffix}"
    return f"{count:.0f}"


class _TrialsColumn(ProgressColumn):
    """Trials done of the total (per dataset)."""

    def render(self, task: Task) -> Text:
        return Text(f"{compact(task.completed)}/{compact(task.total or 0)} trials", style="progress.download")


class _RateColumn(ProgressColumn):
    """Trials per second (per dataset)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{compact(speed)}/s", style="progress.data.speed")


class DelayedBar:
    """A callable that counts finished trials and draws a bar once `SHOW_AFTER` seconds have passed."""

    def __init__(self, total: int, *, label: str, console: Console) -> None:
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            _TrialsColumn(),
            _RateColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self.task = self.bar.add_task(label, total=total)
        self.label = label
        self.start = time.perf_counter()
        self.shown = False

    def __call__(self, trials: int) -> None:
        """Record `trials` more finished trials per dataset; show the bar if the audit is taking a while."""
        self.bar.advance(self.task, trials)
        if not self.shown and time.perf_counter() - self.start >= SHOW_AFTER:
            self.bar.start()
            self.shown = True

    def note(self, text: str) -> None:
        """Show `text` after the label (a sequential audit's running bound)."""
        self.bar.update(self.task, description=f"{self.label} {text}")

    def close(self) -> None:
        """Remove the bar from the terminal."""
        if self.shown:
            self.bar.stop()


def wanted(*, quiet: bool, stream: TextIO | None = None) -> bool:
    """Return True when a bar should be drawn: not `quiet` and `stream` (default stderr) is a terminal."""
    stream = sys.stderr if stream is None else stream
    return not quiet and stream.isatty()


@contextlib.contextmanager
def trial_progress(total: int, *, label: str, enabled: bool = True) -> Iterator[DelayedBar | None]:
    """Yield a `progress(n)` callback for `audit_mechanism` drawing a bar on stderr, or None if not `enabled`.

    `total` is the audit's trials per dataset; the bar is removed on exit,
    also on an error or Ctrl-C.
    """
    if not enabled:
        yield None
        return
    bar = DelayedBar(total, label=label, console=Console(stderr=True))
    try:
        yield bar
    finally:
        bar.close()


@contextlib.contextmanager
def progress_of(spec: Union[bool, Callable[[int], None]], total: int, *, label: str) -> Iterator[Callable[[int], None] | None]:
    """Yield the progress callback an `Execution`'s `progress` asks for: a bar (True), the callable itself, or None."""
    if callable(spec) and not isinstance(spec, bool):
        yield spec
        return
    with trial_progress(total, label=label, enabled=bool(spec)) as bar:
        yield bar
