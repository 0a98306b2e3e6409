"""`trials` left out: the sequential audit where draws are expensive, the fixed 10⁶ elsewhere, and the result says which."""

import json
import sys
from pathlib import Path

import pytest
from dpaudit.audit import Bound, audit_mechanism
from dpaudit.audit.audits.auto_trials import AutoBudget
from dpaudit.audit.audits.default_trials import DEFAULT_TRIALS, costly_draws, default_trials
from dpaudit.audit.cli import main
from dpaudit.audit.estimators.intervals import interval_named
from dpaudit.mechanisms import blackbox, get_mechanism
from dpaudit.mechanisms.external.processes import external

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="external mechanisms need a Unix system")

EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"
AWK = f"sh {EXAMPLES}/serve.sh {EXAMPLES}/laplace.awk -v epsilon=1"
HALF_NOISE = f"{AWK} -v sensitivity=0.5"
"""Half the noise on a sum that moves by 1: 2-DP, claimed 1-DP."""


def _noise(data, rng, size):
    return sum(data) + rng.laplace(0.0, 1.0, size)


def test_a_mechanism_in_another_process_is_audited_sequentially_and_stops_at_its_violation():
    with external(HALF_NOISE, epsilon=1.0) as mech:
        res = audit_mechanism(mech, seed=0)
    seq = res.phases.sequential
    assert res.verdict == "violation" and 1.0 < res.lower_bound.epsilon <= 2.0
    assert seq.default == "its outputs come from another process" and seq.max_trials == DEFAULT_TRIALS
    assert seq.stopped == "violation certified" and seq.trials_drawn < DEFAULT_TRIALS // 10
    assert json.loads(json.dumps(res.to_dict()))["lower_bound"]["sequential"]["default"] == seq.default
    assert "trials sequential" in res.summary() and "(the default: its outputs" in res.summary()


def test_given_trials_keep_the_fixed_audit_of_an_expensive_mechanism():
    with external(HALF_NOISE, epsilon=1.0) as mech:
        res = audit_mechanism(mech, trials=20_000, seed=0)
    assert res.phases.sequential is None and res.lower_bound.method == "clopper-pearson"
    assert res.lower_bound.trials == 20_000


def test_a_budget_given_without_trials_budgets_the_sequential_default():
    with external(AWK, epsilon=1.0) as mech:
        res = audit_mechanism(mech, seed=1, budget=AutoBudget(max_trials=20_000))
    assert res.verdict == "consistent" and res.phases.sequential.max_trials == 20_000
    assert res.phases.sequential.trials_drawn <= 20_000 * 1.01  # Poisson held-out counts


def test_a_cheap_mechanism_keeps_the_fixed_default_and_its_numbers():
    mech = get_mechanism("laplace")
    left_out, given = (audit_mechanism(mech, seed=2).to_dict(), audit_mechanism(mech, trials=DEFAULT_TRIALS, seed=2).to_dict())
    left_out.pop("seconds"), given.pop("seconds")
    assert left_out == given and "sequential" not in left_out["lower_bound"]


def test_what_makes_a_draw_expensive():
    assert costly_draws(get_mechanism("laplace")) is None
    assert costly_draws(blackbox(_noise, epsilon=1.0, null_record=0.0, name="mine")) is None
    with external(AWK, epsilon=1.0) as mech:
        assert costly_draws(mech) == "its outputs come from another process"
        for interval in ("ratio", "bands"):  # sequences certify two rates only: the fixed default stays
            assert default_trials(mech, Bound(strategy=interval_named(interval))) == (DEFAULT_TRIALS, None)
        assert default_trials(mech, Bound()) == ("sequential", "its outputs come from another process")


def test_a_registered_library_adapter_is_an_expensive_draw():
    pytest.importorskip("opendp")
    assert "slow sampler" in costly_draws(get_mechanism("opendp_laplace"))


def test_the_cli_budget_flags_follow_the_default(capsys):
    code = main(["audit", "--command", HALF_NOISE, "--epsilon", "1", "--max-trials", "50000", "--json", "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["lower_bound"]["sequential"]["max_trials"] == 50_000
    assert main(["audit", "laplace", "--max-trials", "50000", "--quiet"]) == 2
    assert "default of 1,000,000 trials for laplace" in capsys.readouterr().err
