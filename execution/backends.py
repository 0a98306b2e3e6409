"""Run an audit's chunks on Dask: a local cluster of worker processes, or an existing cluster.

Chunks go through `Client.submit`, which serialises with cloudpickle, so
mechanisms whose samplers are closures reach the workers (a stdlib pickle
pool would refuse them). Each batch of chunks carries the chunk task itself
(a few kB), so no batch depends on data held by one worker: the scheduler
spreads them evenly, and a worker that dies mid-batch is replaced and the
batch rerun elsewhere (up to `distributed.scheduler.allowed-failures`
times); the chunks' seeds are fixed, so the result is unchanged. Dask is an
optional extra (`dpaudit[dask]`) and is imported only here, only when asked.
`Backend` says where an audit's work runs; `run_chunks` sends its chunks
there: in process (`runner.run_inline`) or here. An existing cluster's
workers get the user's own modules the chunks need (`shipping`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import signal
import threading
import uuid
from typing import Any, Iterator, Sequence

import numpy as np
from dpaudit.errors import DPAuditError, InvalidParameterError, MechanismError
from dpaudit.execution.interrupted import Interrupted
from dpaudit.execution.runner import Progress, Task, run_batch, run_inline
from dpaudit.execution.shipping import ship_user_modules
from dpaudit.validation import check_int

__all__ = [
    "BATCHES_PER_WORKER",
    "CONNECT_TIMEOUT",
    "Backend",
    "MAX_BATCH",
    "NO_DASHBOARD",
    "BackendError",
    "batches",
    "dask_client",
    "run_chunks",
    "run_dask",
]

DASK_MISSING = "Running on Dask workers needs the optional Dask extra: pip install 'dpaudit[dask]'."
CONNECT_TIMEOUT = "10s"
ALLOWED_FAILURES = 3
BATCHES_PER_WORKER = 8
MAX_BATCH = 16
QUIET_LOGGERS = ("distributed", "tornado", "asyncio", "bokeh")
# Dask's nanny sets MALLOC_TRIM_THRESHOLD_ in workers, which turns off glibc's adaptive mmap
# threshold: every chunk's arrays are then mapped afresh and an audit runs ~40% slower. Unset it.
# The workers' statistical profiler samples every thread's stack each 10 ms and the system
# monitor polls every 500 ms: on a machine with as many workers as cores, that is CPU taken
# from the chunks (part of what took the 2-worker speed-up of benchmarks/scaling.py from ~1.5× to ~1.7×).
LOCAL_CONFIG = {
    "distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
}
# No dashboard; the scheduler's small health HTTP server takes a free local port, not 8787.
NO_DASHBOARD = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}


@dataclasses.dataclass(frozen=True)
class Backend:
    """Where chunks run: in this process (default), on `workers` local Dask processes, or at `scheduler`.

    `workers` starts a `distributed.LocalCluster` of that many single-threaded
    worker processes for the audit; `scheduler` is the address of a running
    Dask scheduler (e.g. "tcp://10.0.0.5:8786"). Both need `dpaudit[dask]`,
    and a script passing `workers` needs the `if __name__ == "__main__":`
    guard, since worker processes are spawned and import the main module.
    """

    workers: int | None = None
    scheduler: str | None = None

    def __post_init__(self) -> None:
        if self.workers is not None:
            object.__setattr__(self, "workers", check_int(self.workers, "workers", "Execution", low=1))
        if self.scheduler is not None and not (isinstance(self.scheduler, str) and self.scheduler.strip()):
            raise InvalidParameterError(
                f"The 'scheduler' parameter of Execution must be a Dask scheduler address; got {self.scheduler!r} instead."
            )
        if self.workers is not None and self.scheduler is not None:
            raise InvalidParameterError("Pass either 'workers' (a local cluster) or 'scheduler' (an existing one), not both.")

    @property
    def inline(self) -> bool:
        """Return True when chunks run in this process."""
        return self.workers is None and self.scheduler is None


class BackendError(DPAuditError):
    """Dask is missing, the scheduler cannot be reached, or workers keep dying on a chunk."""


def _import_distributed() -> Any:
    """Return the `distributed` module, or raise `BackendError` telling how to install it."""
    try:
        import distributed
    except ImportError:
        raise BackendError(DASK_MISSING) from None
    return distributed


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """Silence Dask's loggers in this process while the block runs; restore their levels after."""
    loggers = [logging.getLogger(name) for name in QUIET_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


@contextlib.contextmanager
def interrupts_ignored() -> Iterator[None]:
    """Ignore Ctrl-C in this process while the block runs, so that processes spawned in it ignore it for life.

    Worker processes share the terminal's process group; a SIGINT they
    inherit as ignored cannot kill them mid-import with a traceback. Only the
    main thread can change signal handlers; elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def local_client(distributed: Any, workers: int) -> Iterator[Any]:
    """Yield a client of a new `LocalCluster` of `workers` single-threaded processes that ignore Ctrl-C.

    Ctrl-C is left to this process, which cancels the chunks and closes the
    cluster; workers restarted after a crash ignore it too (a setup callback).
    """
    with contextlib.ExitStack() as stack:
        with interrupts_ignored():
            cluster = stack.enter_context(
                distributed.LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    scheduler_kwargs=NO_DASHBOARD,
                    silence_logs=logging.CRITICAL + 1,
                )
            )
        client = stack.enter_context(distributed.Client(cluster))
        client.register_worker_callbacks(setup=_ignore_interrupts)
        yield client


@contextlib.contextmanager
def dask_client(*, workers: int | None = None, scheduler: str | None = None) -> Iterator[Any]:
    """Yield a `distributed.Client`: on a new quiet `LocalCluster` of `workers` processes, or at `scheduler`.

    The local cluster has single-threaded worker processes and no dashboard,
    and is closed when the block exits, also on Ctrl-C.
    """
    distributed = _import_distributed()
    import dask

    with quiet_logs(), dask.config.set(LOCAL_CONFIG):
        if scheduler is not None:
            with _connect(distributed, scheduler) as client:
                yield client
            return
        with local_client(distributed, workers) as client:
            yield client


def _connect(distributed: Any, scheduler: str) -> Any:
    try:
        return distributed.Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise BackendError(f"Cannot reach the Dask scheduler at {scheduler!r}: {exc}.") from None


def batches(n_chunks: int, n_workers: int) -> list[range]:
    """Return consecutive runs of chunk indices of near-equal length, one Dask task each.

    BATCHES_PER_WORKER per worker thread (more when a batch would exceed
    MAX_BATCH chunks), so the workers finish together. A chunk (≈ 10 ms of
    Laplace noise) is too small to pay for a task's scheduling; batching
    changes only how chunks travel, never their sizes or seeds, so the
    result is unchanged.
    """
    count = min(n_chunks, max(BATCHES_PER_WORKER * max(1, n_workers), -(-n_chunks // MAX_BATCH)))
    edges = [round(i * n_chunks / count) for i in range(count + 1)]
    return [range(a, b) for a, b in zip(edges, edges[1:])]


def run_dask(
    client: Any,
    task: Task,
    sizes: Sequence[int],
    chunk_seeds: Sequence[np.random.SeedSequence],
    *,
    name: str,
    seed: int,
    progress: Progress | None = None,
) -> np.ndarray:
    """Run every chunk on `client`'s workers, in batches; return the sum of their count vectors.

    A mechanism error on a worker is raised here as the same one sentence as
    in process (naming the mechanism, the chunk and the seed); on any error or
    Ctrl-C the pending chunks are cancelled.
    """
    from distributed import KilledWorker, as_completed

    run_id = uuid.uuid4().hex
    runs = {
        f"dpaudit-chunks-{run_id}-{b.start}": b for b in batches(len(sizes), sum(client.nthreads().values()))
    }
    futures = [
        client.submit(run_batch, task, b.start, sizes[b.start:b.stop], chunk_seeds[b.start:b.stop], seed, key=key, pure=False)
        for key, b in runs.items()
    ]
    total, done = np.int64(0), 0
    try:
        for future, counts in as_completed(futures, with_results=True):
            total = total + counts
            finished = sum(sizes[runs[future.key].start:runs[future.key].stop])
            done += finished
            if progress:
                progress(finished)
    except KeyboardInterrupt:
        raise Interrupted(total, done=done, total=sum(sizes)) from None
    except MechanismError as exc:
        raise MechanismError(str(exc)) from None
    except KilledWorker as exc:
        raise BackendError(
            f"Dask workers kept dying on estimation {_span(runs.get(exc.args[0]))} of the audit of '{name}' "
            f"(seed {seed}), so it was given up; check the workers' memory."
        ) from None
    finally:
        client.cancel(futures)
    return total


def run_chunks(
    task: Task,
    sizes: Sequence[int],
    chunk_seeds: Sequence[np.random.SeedSequence],
    *,
    name: str,
    seed: int,
    backend: Backend = Backend(),
    progress: Progress | None = None,
) -> np.ndarray:
    """Run every chunk on `backend`; return the sum of their count vectors (the same on every backend).

    At a scheduler, the user's modules the task refers to are uploaded to its workers first (`shipping`).
    """
    if backend.inline:
        return run_inline(task, sizes, chunk_seeds, seed=seed, progress=progress)
    with dask_client(workers=backend.workers, scheduler=backend.scheduler) as client:
        if backend.scheduler is not None:
            ship_user_modules(client, task)
        return run_dask(client, task, sizes, chunk_seeds, name=name, seed=seed, progress=progress)


def _span(chunks: range | None) -> str:
    if chunks is None:
        return "chunks"
    return f"chunk {chunks.start}" if len(chunks) == 1 else f"chunks {chunks.start}–{chunks.stop - 1}"
