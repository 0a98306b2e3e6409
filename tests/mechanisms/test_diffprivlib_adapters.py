"""IBM diffprivlib adapters: registered without building anything; in diffprivlib's environment, audits as expected.

The registration tests build nothing. The others (marked `libraries`, left
out of the default run) build the environment `diffprivlib-0.6.6` on first
use and draw through diffprivlib's `random_state=`, seeded by the audit, so
they repeat. A correct mechanism must be consistent and a finding must be
certified at confidence 0.95: each is a property of the released package
(its calibration against the claim), with no tolerance tuned to a run.
"""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import get_mechanism
from dpaudit.mechanisms.adapters import diffprivlib as dl
from dpaudit.mechanisms.base import not_neighbours
from dpaudit.mechanisms.environments import ENVIRONMENTS
from dpaudit.mechanisms.registry import list_mechanisms, registration


def test_registered_with_their_environments_declared_and_nothing_built(tmp_path, monkeypatch):
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path))
    names = [n for n in list_mechanisms() if n.startswith("diffprivlib_")]
    assert {"diffprivlib_laplace", "diffprivlib_mean", "diffprivlib_nanmean", "diffprivlib_logistic_regression"} <= set(names)
    assert {dl.ENVIRONMENT, dl.OLDER_ENVIRONMENT} <= set(ENVIRONMENTS)
    assert registration("diffprivlib_laplace_bits").expected == "violation"
    assert registration("diffprivlib_logistic_regression").expected == "violation"  # D3, certified at the suite's 500 fits
    assert registration("diffprivlib_laplace").expected == "consistent"
    assert not any(tmp_path.iterdir())  # listing built nothing


def test_unknown_environment_is_one_sentence():
    with pytest.raises(InvalidParameterError, match="must be one of diffprivlib-"):
        get_mechanism("diffprivlib_laplace", environment="diffprivlib-9.9")


def test_default_pairs_are_neighbours_from_the_bounds_alone():
    d0, d1 = dl.record_pair(0.0, 1.0, 4)
    assert d0.tolist() == [0.0] * 4 and d1.tolist() == [1.0, 0.0, 0.0, 0.0]
    d0, d1 = dl.record_pair(0.0, 1.0, 4, added=True)
    assert d1.tolist() == [0.0] * 4 + [1.0]
    d0, d1 = dl.model_pair(0.0, 1.0, 2, 4, labels=3)
    assert d0[:, -1].tolist() == [0, 1, 0, 1] and d1[0].tolist() == [1.0, 1.0, 2.0]
    assert dl.answer_pair(2.0, 1.0)[1].tolist() == [3.0]



@pytest.mark.libraries
@pytest.mark.parametrize("name", ["diffprivlib_laplace", "diffprivlib_geometric", "diffprivlib_mean", "diffprivlib_histogram"])
def test_correct_calls_are_consistent(built, name):
    mech = built(name)
    assert not_neighbours(mech, *mech.default_pair) is None
    result = audit_mechanism(mech, trials=4000 if "laplace" in name or "geometric" in name else 1000, seed=0)
    assert result.verdict == "consistent", result.lower_bound.epsilon


@pytest.mark.libraries
def test_laplace_low_bits_are_certified(built):
    result = audit_mechanism(built("diffprivlib_laplace_bits"), trials=4000, seed=0)
    assert result.verdict == "violation"


@pytest.mark.libraries
def test_nanmean_with_a_record_replaced_by_nan_is_certified(built):
    mech = built("diffprivlib_nanmean")
    d0 = np.array([np.nan, np.nan, np.nan, np.nan, 1.0])
    d1 = np.array([np.nan, np.nan, np.nan, np.nan, 0.0])
    assert not_neighbours(mech, d0, d1) is None
    result = audit_mechanism(mech, d0, d1, trials=1000, seed=0)
    assert result.verdict == "violation" and result.lower_bound.epsilon > 1.0


@pytest.mark.libraries
def test_linear_regression_without_intercept_is_certified(built):
    result = audit_mechanism(built("diffprivlib_linear_regression_no_intercept"), trials=200, seed=0)
    assert result.verdict == "violation"


@pytest.mark.libraries
@pytest.mark.parametrize("name, params", [("diffprivlib_nanmean", {}), ("diffprivlib_nansum", {"lower": 1.0, "upper": 2.0})])
def test_the_hunt_finds_the_nan_tools_finding_among_filled_datasets(built, name, params):
    """D1 without a pair: the hunt's filled datasets (NaN or a bound in every record but one) hold it."""
    mech = built(name, **params)
    assert audit_mechanism(mech, trials=1000, seed=0).verdict == "consistent"  # the default pair has no NaN
    result = audit_mechanism(mech, trials=1000, seed=0, search="hunt")
    found = result.phases.pair_search
    assert result.verdict == "violation" and found["kind"] == "filled"
    assert not_neighbours(mech, np.asarray(found["d0"], float), np.asarray(found["d1"], float)) is None


@pytest.mark.libraries
def test_the_hunt_flags_logistic_regression_s_label_set(built):
    """D3 by the hunt: 21 candidates of 200 fits each, seconds now that the side runs BLAS on one thread."""
    result = audit_mechanism(built("diffprivlib_logistic_regression"), trials=200, seed=0, search="hunt")
    assert result.verdict == "violation"


@pytest.mark.libraries
def test_the_side_runs_blas_on_one_thread(built):
    """The side pins BLAS and OpenMP to one thread (numpy's, loaded first, and scipy's, loaded after it)."""
    import subprocess

    python = str(dl.environment_python(dl.ENVIRONMENT))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import diffprivlib_side, scipy.linalg, threadpoolctl; "
            "print(max(i['num_threads'] for i in threadpoolctl.threadpool_info()))")
    out = subprocess.run([python, "-c", code, str(dl.SIDE.parent)], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1"]
