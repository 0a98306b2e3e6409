"""A user's module reaches the workers of an existing Dask cluster, which cannot import it: the same audit as in process.

The cluster starts before the module is written, so its worker processes
(spawned with this process's import path of that moment) cannot import it
from anywhere but what dpaudit uploads.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest
from dpaudit.audit.cli import main
from dpaudit.execution.backends import NO_DASHBOARD
from dpaudit.execution.shipping import referenced_modules, user_modules

distributed = pytest.importorskip("distributed")

MODULE = '''
import numpy as np
from dpaudit.mechanisms import blackbox
{helper}

def noisy_count(data, rng):
    return {total} + rng.laplace(0.0, 1.0)

mech = blackbox(noisy_count, epsilon=1.0, name="mine", null_record=0.0, default_pair=([0.0], [1.0]))
'''


@pytest.fixture(scope="module")
def scheduler():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, scheduler_kwargs=NO_DASHBOARD,
                                  silence_logs=logging.CRITICAL) as cluster:
        yield cluster.scheduler_address


@pytest.fixture
def user_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [name for name in sys.modules if name.startswith("ship_")]:
        del sys.modules[name]


def _audit(capsys, reference: str, *flags: str) -> dict:
    status = main(["audit", reference, "--trials", "200000", "--seed", "3", "--json", "--quiet", *flags])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    out = json.loads(captured.out)
    out.pop("seconds")
    return out


def test_a_module_of_the_users_folder_is_audited_at_a_scheduler_as_in_process(scheduler, user_folder, capsys):
    (user_folder / "ship_flat.py").write_text(MODULE.format(helper="", total="np.sum(data)"))
    assert _audit(capsys, "ship_flat:mech", "--scheduler", scheduler) == _audit(capsys, "ship_flat:mech")


RELEASES = '''
import numpy as np
from dpaudit.mechanisms import blackbox
from dpaudit.mechanisms.records import VectorRecords

def noisy_sum(data, rng):
    return np.sum(np.asarray(data, dtype=float).reshape(len(data), -1), axis=0) + rng.normal(0.0, 2.0, 5)

def noisy_means(data, rng):
    return np.asarray(data, dtype=float).mean(axis=0) + rng.normal(0.0, 1.0, np.shape(data)[1])

sums = blackbox(noisy_sum, epsilon=1.0, delta=1e-5, name="sums", records=VectorRecords(width=5), null_record=0.0,
                default_pair=([[0.0] * 5], [[0.0] * 5, [1.0] * 5]))
means = blackbox(noisy_means, epsilon=1.0, delta=1e-5, name="means", relation="replace-one")
'''


@pytest.mark.parametrize("argv", [
    ["canary", "ship_releases:sums", "--runs", "3000"],
    ["canary", "ship_releases:sums", "--runs", "600", "--canary", "random"],
    ["one-run", "ship_releases:sums", "--canaries", "100"],
    ["trace", "ship_releases:means", "--rows", "20", "--dim", "40", "--runs", "400"],
    ["trace", "ship_releases:means", "--rows", "20", "--dim", "40", "--runs", "300", "--fresh-data"],
], ids=" ".join)
def test_every_membership_command_gives_at_a_scheduler_what_it_gives_in_process(scheduler, user_folder, capsys, argv):
    (user_folder / "ship_releases.py").write_text(RELEASES)
    command, reference, *flags = argv
    remote = _run(capsys, [command, reference, *flags, "--scheduler", scheduler])
    assert remote == _run(capsys, [command, reference, *flags])
    assert remote == _run(capsys, [command, reference, *flags, "--workers", "2"])


def _run(capsys, argv: list[str]) -> dict:
    status = main([*argv, "--seed", "5", "--json", "--quiet"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    out = json.loads(captured.out)
    out.pop("seconds")
    return out


def test_a_package_of_the_users_folder_is_shipped_whole(scheduler, user_folder, capsys):
    package = user_folder / "ship_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text("import numpy as np\n\ndef total(data):\n    return np.sum(data)\n")
    (package / "mech.py").write_text(MODULE.format(helper="from ship_pkg.helper import total", total="total(data)"))
    assert _audit(capsys, "ship_pkg.mech:mech", "--scheduler", scheduler) == _audit(capsys, "ship_pkg.mech:mech")


def test_only_the_users_modules_that_the_task_needs_are_shipped(user_folder):
    (user_folder / "ship_needed.py").write_text("def f(x):\n    return x\n")
    (user_folder / "ship_unused.py").write_text("def g(x):\n    return x\n")
    import ship_needed
    import ship_unused  # noqa: F401  (imported, but not in the task)
    from dpaudit.mechanisms import blackbox

    task = (ship_needed.f, blackbox(lambda data, rng: 0.0, epsilon=1.0))
    assert set(user_modules(referenced_modules(task), [user_folder.resolve()])) == {"ship_needed"}


def test_a_users_dpsgd_loop_trains_at_a_scheduler_as_in_process(scheduler, user_folder, capsys):
    """`dpaudit dpsgd --target module:target` with a user's numpy loop: the workers get the module, the runs are the same."""
    loop = Path(__file__).parents[2] / "docs" / "examples" / "numpy_dpsgd.py"
    (user_folder / "ship_dpsgd.py").write_text(loop.read_text())
    argv = ["dpsgd", "--target", "ship_dpsgd:target", "--threat", "white-box", "--canary", "crafted", "--runs", "10"]
    assert _run(capsys, [*argv, "--scheduler", scheduler]) == _run(capsys, argv)
