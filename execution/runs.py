"""Independent runs (e.g. DP-SGD training runs) on a `Backend`: in process or on Dask, each handed back as it ends.

Where `backends.run_chunks` sums many small chunks, an audit of a training
pipeline has few long runs whose results must be kept one by one (the
results folder of `run_store`). `run_each` plays them on the same `Backend`
as every other audit (in process, a local Dask cluster, or a scheduler);
each run is a pure function of its index and the audit's seed, so the
result does not depend on where or in which order runs finish. `run_groups`
plays runs a group at a time (e.g. trained side by side) and still hands
each run back on its own. A game that asks for its runs in batches (the
sequential games) holds `one_client` around them, so every batch on Dask
goes to the same client and cluster, opened once.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Callable, Iterator, Sequence

from dpaudit.execution.backends import Backend, dask_client
from dpaudit.execution.runner import Progress
from dpaudit.execution.shipping import ship_user_modules

__all__ = ["map_runs", "one_client", "run_each", "run_groups"]

_HELD: contextvars.ContextVar[tuple[Backend, Any] | None] = contextvars.ContextVar("dpaudit_held_client", default=None)
"""The backend and Dask client that `one_client` holds open, or None."""


@contextlib.contextmanager
def one_client(backend: Backend) -> Iterator[None]:
    """Hold one Dask client of `backend` open while the block runs; every `run_each` on it in the block uses that client.

    In process (or inside another `one_client` of the same backend) it
    opens nothing. The client and its local cluster close when the block
    exits, also on an error or Ctrl-C.
    """
    held = _HELD.get()
    if backend.inline or (held is not None and held[0] == backend):
        yield
        return
    with dask_client(workers=backend.workers, scheduler=backend.scheduler) as client:
        token = _HELD.set((backend, client))
        try:
            yield
        finally:
            _HELD.reset(token)


def _client(backend: Backend) -> contextlib.AbstractContextManager[Any]:
    """Return a context giving the client `one_client` holds for `backend`, or a new one closed at its end."""
    held = _HELD.get()
    if held is not None and held[0] == backend:
        return contextlib.nullcontext(held[1])
    return dask_client(workers=backend.workers, scheduler=backend.scheduler)


def run_each(
    play: Callable[[int], Any],
    indices: Sequence[int],
    *,
    backend: Backend,
    finish: Callable[[int, Any], None],
    progress: Progress | None = None,
    worker_setup: Callable[[], Any] | None = None,
) -> None:
    """Call `play(i)` for every index on `backend`, and `finish(i, value)` with each value as its run ends.

    At a scheduler, the user's modules `play` refers to are uploaded to the workers (`shipping`).
    On Dask, `worker_setup` first runs once on every worker (e.g. to pin
    torch to one thread), and on any error or Ctrl-C the pending runs are
    cancelled; the finished ones have been handed to `finish` already.
    """
    if backend.inline:
        for index in indices:
            finish(index, play(index))
            if progress:
                progress(1)
        return
    with _client(backend) as client:
        from distributed import as_completed

        if backend.scheduler is not None:
            ship_user_modules(client, (play, worker_setup))
        if worker_setup is not None:
            client.run(worker_setup)
        futures = {client.submit(play, i, pure=False): i for i in indices}
        try:
            for future, value in as_completed(list(futures), with_results=True):
                finish(futures[future], value)
                if progress:
                    progress(1)
        finally:
            client.cancel(list(futures))


def run_groups(
    play: Callable[[tuple[int, ...]], Sequence[Any]],
    indices: Sequence[int],
    *,
    size: int,
    backend: Backend,
    finish: Callable[[int, Any], None],
    progress: Progress | None = None,
    worker_setup: Callable[[], Any] | None = None,
) -> None:
    """Call `play(group)` for consecutive groups of at most `size` indices, one value per index, on `backend` (`run_each`).

    As a group ends, `finish(i, value)` is called for each of its indices
    in turn, and `progress` advances by one run each time.
    """
    groups = [tuple(indices[start:start + size]) for start in range(0, len(indices), size)]

    def finish_group(group: tuple[int, ...], values: Sequence[Any]) -> None:
        for index, value in zip(group, values, strict=True):
            finish(index, value)
            if progress:
                progress(1)

    run_each(play, groups, backend=backend, finish=finish_group, worker_setup=worker_setup)


def map_runs(play: Callable[[int], Any], n: int, *, backend: Backend, progress: Progress | None = None) -> list[Any]:
    """Return [play(0), ..., play(n − 1)], the calls played on `backend` (`run_each`), each value in its index's place.

    The mapper of a game's chunks of runs (`dpaudit.attacks.canary.Mapper`):
    each call draws from its own seed, so the list is the same on every backend.
    """
    values: list[Any] = [None] * n

    def keep(index: int, value: Any) -> None:
        values[index] = value

    run_each(play, range(n), backend=backend, finish=keep, progress=progress)
    return values
