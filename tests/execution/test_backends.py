"""The same seed gives the same audit inline, on a new local Dask cluster and at an existing scheduler.

Also: a worker killed mid-chunk changes nothing, and a mechanism raising on a
worker stops the audit with the same one sentence as in process.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import pathlib

import numpy as np
import pytest
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.errors import MechanismError
from dpaudit.execution.backends import NO_DASHBOARD, BackendError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.registry import get_mechanism

distributed = pytest.importorskip("distributed")

TRIALS = 400_000  # 360k held out: chunks of 250k and 110k
LAST_CHUNK = 110_000


def without_time(result) -> dict:
    out = result.to_dict()
    out.pop("seconds")
    return out


def dies_once(mech: Mechanism, marker: pathlib.Path, parent: int) -> Mechanism:
    """Return `mech` whose first call in a process other than `parent` kills that process."""

    def sample(data, size, rng):
        if os.getpid() != parent:
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                pass
            else:
                os._exit(1)
        return mech.sampler(data, size, rng)

    return dataclasses.replace(mech, sampler=sample)


def raises_on_last_chunk(mech: Mechanism) -> Mechanism:
    """Return `mech` raising RuntimeError when asked for about the last held-out chunk's (Poisson) size."""

    def sample(data, size, rng):
        if abs(size - LAST_CHUNK) < 5_000:
            raise RuntimeError("boom")
        return mech.sampler(data, size, rng)

    return dataclasses.replace(mech, sampler=sample)


@pytest.fixture(scope="module")
def scheduler():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, scheduler_kwargs=NO_DASHBOARD, silence_logs=logging.CRITICAL
    ) as cluster:
        yield cluster.scheduler_address


def test_local_cluster_and_scheduler_match_inline(scheduler):
    mech = get_mechanism("laplace")
    inline = audit_mechanism(mech, trials=TRIALS, seed=11)
    seen = []
    local = audit_mechanism(mech, trials=TRIALS, seed=11, workers=2)
    remote = audit_mechanism(mech, trials=TRIALS, seed=11, scheduler=scheduler, progress=seen.append)
    assert without_time(local) == without_time(inline)
    assert without_time(remote) == without_time(inline)
    assert sum(seen) == TRIALS


def test_bands_interval_on_a_cluster_matches_inline(scheduler):
    mech = get_mechanism("gaussian")
    inline = audit_mechanism(mech, trials=TRIALS, seed=11, interval="bands")
    remote = audit_mechanism(mech, trials=TRIALS, seed=11, scheduler=scheduler, interval="bands")
    assert without_time(remote) == without_time(inline)


def test_other_seed_changes_the_counts(scheduler):
    mech = get_mechanism("laplace")
    a = audit_mechanism(mech, trials=TRIALS, seed=11, scheduler=scheduler)
    b = audit_mechanism(mech, trials=TRIALS, seed=12, scheduler=scheduler)
    assert a.lower_bound.details != b.lower_bound.details


def test_killed_worker_does_not_change_the_result(scheduler, tmp_path):
    marker = tmp_path / "killed"
    mech = dies_once(get_mechanism("laplace"), marker, os.getpid())
    inline = audit_mechanism(mech, trials=TRIALS, seed=5)
    remote = audit_mechanism(mech, trials=TRIALS, seed=5, scheduler=scheduler)
    assert marker.exists(), "no worker was killed"
    assert without_time(remote) == without_time(inline)


def test_raising_mechanism_names_chunk_and_seed(scheduler):
    mech = raises_on_last_chunk(get_mechanism("laplace"))
    with pytest.raises(MechanismError) as inline:
        audit_mechanism(mech, trials=TRIALS, seed=7)
    with pytest.raises(MechanismError) as remote:
        audit_mechanism(mech, trials=TRIALS, seed=7, scheduler=scheduler)
    message = str(remote.value)
    assert message == str(inline.value)
    assert "'laplace'" in message and "estimation chunk 1" in message and "seed 7" in message
    assert "\n" not in message and message.endswith(".")
    assert remote.value.__cause__ is None


def always_dies(mech: Mechanism, parent: int) -> Mechanism:
    """Return `mech` that kills any process but `parent` calling it."""

    def sample(data, size, rng):
        if os.getpid() != parent:
            os._exit(1)
        return mech.sampler(data, size, rng)

    return dataclasses.replace(mech, sampler=sample)


@pytest.mark.slow
def test_workers_dying_every_time_give_one_sentence():
    mech = always_dies(get_mechanism("laplace"), os.getpid())
    with pytest.raises(BackendError, match=r"kept dying on estimation chunks? [\d–]+ of the audit of 'laplace' \(seed 2\)"):
        audit_mechanism(mech, trials=TRIALS, seed=2, workers=2)


def test_progress_totals_trials_inline():
    seen = []
    audit_mechanism(get_mechanism("laplace"), trials=20_000, seed=1, progress=seen.append)
    assert sum(seen) == 20_000 and len(seen) >= 2
    assert np.all(np.asarray(seen) > 0)
