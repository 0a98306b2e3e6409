"""Backend options are validated in one sentence; Dask is optional; the progress bar is off unless wanted."""

from __future__ import annotations

import io
import sys

import pytest
from dpaudit.attacks.sampling import chunk_sizes, per_chunk
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.errors import InvalidParameterError
from dpaudit.execution.backends import BATCHES_PER_WORKER, MAX_BATCH, Backend, BackendError, batches, dask_client
from dpaudit.execution.progress import compact, trial_progress, wanted
from dpaudit.mechanisms.registry import get_mechanism


@pytest.mark.parametrize("kwargs", [{"workers": 0}, {"workers": 1.5}, {"scheduler": ""}, {"workers": 2, "scheduler": "tcp://x:1"}])
def test_bad_backend_is_refused(kwargs):
    with pytest.raises(InvalidParameterError):
        audit_mechanism(get_mechanism("laplace"), trials=1000, **kwargs)


def test_missing_dask_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(BackendError, match=r"pip install 'dpaudit\[dask\]'"):
        with dask_client(workers=2):
            pass


def test_unreachable_scheduler_is_one_sentence(monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr("dpaudit.execution.backends.CONNECT_TIMEOUT", "1s")
    with pytest.raises(BackendError, match="Cannot reach the Dask scheduler"):
        audit_mechanism(get_mechanism("laplace"), trials=20_000, scheduler="tcp://127.0.0.1:9")


def test_chunking_depends_only_on_trials_and_output_size():
    assert Backend().inline and not Backend(workers=1).inline
    sizes = chunk_sizes(900_000, per_chunk(1))
    assert sum(sizes) == 900_000 and max(sizes) == per_chunk(1)
    assert per_chunk(10) * 10 <= per_chunk(1)


def test_progress_off_when_not_a_terminal_or_quiet():
    assert not wanted(quiet=False, stream=io.StringIO())
    assert not wanted(quiet=True, stream=io.StringIO())
    with trial_progress(10, label="x", enabled=False) as progress:
        assert progress is None


def test_bar_counts_without_drawing_before_a_second():
    with trial_progress(100, label="x") as progress:
        progress(40)
        progress(60)
        assert not progress.shown
        assert progress.bar.tasks[0].completed == 100


def test_compact_counts():
    assert [compact(n) for n in (999, 1000, 12_345_678, 2e9)] == ["999", "1k", "12.3M", "2G"]


@pytest.mark.parametrize("n_chunks, n_workers", [(1, 2), (4, 2), (360, 2), (4000, 64), (37, 1)])
def test_batches_cover_every_chunk_once_in_order(n_chunks, n_workers):
    runs = batches(n_chunks, n_workers)
    assert [i for run in runs for i in run] == list(range(n_chunks))
    assert max(len(run) for run in runs) <= MAX_BATCH
    assert len(runs) >= min(n_chunks, n_workers)


@pytest.mark.parametrize("n_chunks, n_workers", [(180, 2), (181, 2), (37, 1), (4000, 64), (50_000, 2)])
def test_batches_are_near_equal_so_workers_finish_together(n_chunks, n_workers):
    lengths = [len(run) for run in batches(n_chunks, n_workers)]
    assert max(lengths) - min(lengths) <= 1
    assert len(lengths) >= min(n_chunks, BATCHES_PER_WORKER * n_workers)
