"""Issue 17, item 8: the smaller edges of the CLI and the audit, each with its sentence and status."""

import json
import sys

import numpy as np
import pytest
from dpaudit.audit import MultiRun, audit_canaries, audit_mechanism
from dpaudit.audit.cli import main
from dpaudit.execution.reproducibility import GLOBAL_STREAMS_WARNING
from dpaudit.mechanisms import InvalidParameterError, blackbox, get_mechanism

USER_MECHANISMS = '''
import time
import numpy as np
from dpaudit.mechanisms import blackbox

PAIR = ([0.0], [1.0])
calls = {"n": 0}

def _hangs(data, rng, size):
    time.sleep(1000)

def _hangs_late(data, rng, size):
    calls["n"] += 1
    if calls["n"] > 40:
        time.sleep(1000)
    return np.sum(data) + rng.laplace(0.0, 0.1, size)

hangs = blackbox(_hangs, epsilon=1.0, null_record=0.0, default_pair=PAIR)
hangs_late = blackbox(_hangs_late, epsilon=1.0, null_record=0.0, default_pair=PAIR)
no_pair = blackbox(lambda data, rng: float(np.sum(data)), epsilon=1.0, null_record=0.0)
far_pair = blackbox(lambda data, rng, size: np.sum(data) + rng.laplace(0.0, 1.0, size), epsilon=1.0,
                    default_pair=([0] * 5, [1] * 5))
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "edge_cli_mechs.py").write_text(USER_MECHANISMS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "edge_cli_mechs"
    sys.modules.pop("edge_cli_mechs", None)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_hanging_mechanism_is_stopped_by_the_timeout(capsys, user_module):
    code, _, err = run(capsys, "audit", f"{user_module}:hangs", "--timeout", "0.5", "--quiet")
    assert code == 3 and "did not finish within the --timeout of 0.5 seconds" in err


def test_the_timeout_keeps_the_trials_that_finished(capsys, user_module):
    code, out, err = run(capsys, "audit", f"{user_module}:hangs_late", "--timeout", "1", "--trials", "1e7", "--quiet",
                         "--json")
    held = json.loads(out)["lower_bound"]["held_out_d0"]
    assert code == 1 and 0 < held < 10**7 and "stopped by the --timeout" in err


def test_a_mechanism_without_a_pair_names_the_fix_a_cli_user_can_make(capsys, user_module):
    code, _, err = run(capsys, "audit", f"{user_module}:no_pair", "--quiet")
    assert code == 2 and "blackbox(..., default_pair=(d0, d1))" in err and "InputSpace" not in err
    code, _, err = run(capsys, "audit", f"{user_module}:no_pair", "--search", "--quiet")
    assert code == 2 and "blackbox(..., default_pair=(d0, d1))" in err


def test_param_on_a_mechanism_object_is_refused(capsys, user_module):
    code, _, err = run(capsys, "audit", f"{user_module}:hangs", "--param", "scale=2", "--quiet")
    assert code == 2 and "takes no --param (scale)" in err


def test_a_mechanism_on_the_global_generator_is_said_to_be_irreproducible():
    legacy = blackbox(lambda data, rng, size: np.sum(data) + np.random.laplace(0.0, 1.0, size), epsilon=1.0, null_record=0.0)
    res = audit_mechanism(legacy, [0.0], [1.0], trials=10_000, seed=0)
    assert res.to_dict()["lower_bound"]["warning"] == GLOBAL_STREAMS_WARNING and "global random generator" in res.summary()
    assert "warning" not in audit_mechanism(get_mechanism("laplace"), trials=10_000, seed=0).lower_bound.details


def test_canaries_take_the_width_of_a_users_declared_records():
    from dpaudit.mechanisms.records import VectorRecords

    def noisy_sum(data, rng):
        return np.asarray(data, float).sum(axis=0) + rng.normal(0.0, 1.0, 3)

    d1 = np.zeros((2, 3))
    d1[0, 0] = 1.0
    mech = blackbox(noisy_sum, epsilon=1.0, null_record=0.0, delta=1e-5, default_pair=(np.zeros((2, 3)), d1),
                    records=VectorRecords(width=3))
    assert audit_canaries(mech, game=MultiRun(200), canary="fixed", seed=0).lower_bound.epsilon >= 0.0
    with pytest.raises(InvalidParameterError, match="records of 3 numbers.*got dim=5"):
        audit_canaries(mech, game=MultiRun(200), canary="fixed", dim=5, seed=0)


def test_a_pair_that_is_not_neighbouring_is_bad_input_not_a_violation(capsys, user_module):
    # A correct Laplace count on [0]*5 against [1]*5 used to "certify" 4.66 and exit 1.
    code, out, err = run(capsys, "audit", f"{user_module}:far_pair", "--quiet", "--json")
    assert code == 2 and not out and "not neighbours" in err and "differ in 5 records" in err
