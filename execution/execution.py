"""Where an audit runs and what it shows: one small object that every entry point takes as `execution=`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Union

from dpaudit.errors import InvalidParameterError
from dpaudit.execution.backends import Backend

if TYPE_CHECKING:
    from dpaudit.execution.run_store import RunStore

__all__ = ["Execution", "ProgressSpec", "in_process", "spread"]

ProgressSpec = Union[bool, Callable[[int], None]]
"""False: nothing; True: a bar on stderr once the audit takes a while; a callable: called with each batch of work done."""


@dataclasses.dataclass(frozen=True)
class Execution:
    """Where an audit's work runs and what it keeps.

    Attributes:
        workers: run on a local Dask cluster of this many processes (None: in process).
        scheduler: or on the running Dask cluster whose scheduler is at this address.
        progress: False, True (a bar), or a callable `progress(n)` told of n more units done
            (trials per dataset, or training runs).
        store: a results folder that keeps every finished training run (DP-SGD audits), to resume from.
        resume: continue the runs kept in `store` (refused when they are another audit's).
    """

    workers: int | None = None
    scheduler: str | None = None
    progress: ProgressSpec = False
    store: str | Path | None = None
    resume: bool = False

    def __post_init__(self) -> None:
        Backend(workers=self.workers, scheduler=self.scheduler)
        if not (isinstance(self.progress, bool) or callable(self.progress)):
            raise InvalidParameterError(
                f"The 'progress' parameter of Execution must be a bool or a callable; got {self.progress!r} instead."
            )
        if self.resume and self.store is None:
            raise InvalidParameterError("Execution(resume=True) continues the runs of a results folder; give it store=.")

    def run_store(self, setup: Mapping[str, Any], *, part: str | None = None) -> RunStore | None:
        """Return the results folder's store for an audit of `setup` (its fingerprint included), or None without `store`.

        `part`: a subfolder of its own for runs played before the audit's
        own (e.g. a screening phase), each part with its setup checked alone.

        Raises:
            InvalidParameterError: when resuming a folder that another audit's runs fill.
        """
        if self.store is None:
            return None
        from dpaudit.execution.run_store import RunStore

        return RunStore(Path(self.store) if part is None else Path(self.store) / part, setup, resume=self.resume)

    @property
    def backend(self) -> Backend:
        """Return the backend the work runs on."""
        return Backend(workers=self.workers, scheduler=self.scheduler)


def in_process(execution: Execution, owner: str) -> Execution:
    """Return `execution` for an audit whose game draws in one vectorized call here: no workers, scheduler or store.

    Raises:
        InvalidParameterError: when it asks for Dask or a run store, which would mean nothing there.
    """
    if not isinstance(execution, Execution):
        raise InvalidParameterError(f"The 'execution' parameter of {owner} must be an Execution; got {type(execution).__name__}.")
    if execution.workers is not None or execution.scheduler is not None or execution.store is not None:
        raise InvalidParameterError(
            f"{owner} plays its game in one vectorized call in this process: it takes no workers, scheduler or store."
        )
    return execution


def spread(execution: Execution, owner: str) -> Callable[[Callable[[int], Any], int], list]:
    """Return the mapper that plays a game's chunks of runs where `execution` says: in process, or on Dask.

    For the audits whose games are many independent draws that keep nothing
    (canary and tracing games): no run store. Each chunk draws from its own
    seed, fixed before any runs, so the result is the same on every backend.

    Raises:
        InvalidParameterError: when it is not an `Execution`, or asks for a run store.
    """
    if not isinstance(execution, Execution):
        raise InvalidParameterError(f"The 'execution' parameter of {owner} must be an Execution; got {type(execution).__name__}.")
    if execution.store is not None:
        raise InvalidParameterError(f"{owner} keeps no training runs, so it takes no store; drop store= (--store).")
    import functools

    from dpaudit.execution.runs import map_runs

    return functools.partial(map_runs, backend=execution.backend)
