"""DP-SGD audits: each buggy variant's docstring command flags it, the correct trainer under it is not flagged."""

import json
import re
import shlex

import pytest
from dpaudit.attacks.games import OneRun
from dpaudit.audit.audits.dpsgd import audit_dpsgd
from dpaudit.audit.cli import main
from dpaudit.mechanisms.dpsgd.accounting import actual_event, claimed_event, pld_epsilon, poisson_event, rdp_epsilon
from dpaudit.mechanisms.dpsgd.bugs import BUGGY_CONFIGS
from dpaudit.mechanisms.dpsgd.config import BUGS, DPSGDConfig

pytest.importorskip("torch")

FAST = ("no-clipping", "noise-unscaled")
SLOW = ("clip-batch-mean", "accountant-rate", "bias-unclipped")


def _command(bug):
    found = re.search(r"`dpaudit (dpsgd [^`]+)`", BUGGY_CONFIGS[bug].__doc__)
    assert found, f"{bug}'s docstring names no `dpaudit dpsgd` command"
    return shlex.split(found.group(1))


def _run(argv, capsys):
    status = main(argv + ["--json", "--quiet"])
    return status, json.loads(capsys.readouterr().out)


def test_every_bug_has_a_documented_variant():
    assert set(BUGGY_CONFIGS) == set(BUGS)
    assert all(BUGGY_CONFIGS[bug]().bug == bug for bug in BUGS)


@pytest.mark.parametrize("bug", FAST + tuple(pytest.param(b, marks=pytest.mark.slow) for b in SLOW))
def test_docstring_command_flags_the_buggy_trainer(bug, capsys):
    status, out = _run(_command(bug), capsys)
    assert status == 1 and out["verdict"] == "violation"
    assert out["lower_bound"]["epsilon"] > out["claim"]["epsilon"] and out["assumption"] is None


def _correct(argv):
    """The same command on the correct trainer: drop --bug NAME."""
    i = argv.index("--bug")
    return argv[:i] + argv[i + 2:]


def test_the_correct_trainer_under_a_bug_command_is_consistent(capsys):
    status, out = _run(_correct(_command("no-clipping")), capsys)
    assert status == 0 and out["verdict"] == "consistent"
    assert out["upper_bound"]["epsilon"] == pytest.approx(out["claim"]["epsilon"], rel=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("bug", FAST + SLOW)
def test_the_correct_trainer_is_not_flagged_over_20_seeds(bug, capsys):
    argv = _correct(_command(bug))
    statuses = [main(argv + ["--seed", str(seed), "--json", "--quiet"]) for seed in range(20)]
    capsys.readouterr()
    assert statuses == [0] * 20


def test_claims_match_dp_accounting_and_the_published_numbers():
    event = poisson_event(1.15, 1 / 8, 100)
    assert pld_epsilon(event, 1e-5) == pytest.approx(6.918, abs=0.01)
    assert rdp_epsilon(event, 1e-5) > pld_epsilon(event, 1e-5)
    rows = 1797
    honest = DPSGDConfig(sample_rate=0.1, steps=30, batching="shuffle")
    assert pld_epsilon(claimed_event(honest, rows), 1e-5) > pld_epsilon(poisson_event(1.0, 0.1, 30), 1e-5)
    lied = DPSGDConfig(sample_rate=0.1, steps=30, bug="shuffle-as-poisson")
    assert pld_epsilon(claimed_event(lied, rows), 1e-5) == pytest.approx(pld_epsilon(poisson_event(1.0, 0.1, 30), 1e-5))
    assert actual_event(lied, rows) == claimed_event(honest, rows)
    rate = DPSGDConfig(sample_rate=1.0, steps=10, noise_multiplier=2, bug="accountant-rate")
    assert pld_epsilon(claimed_event(rate, rows), 1e-5) < pld_epsilon(actual_event(rate, rows), 1e-5) / 5


def test_one_run_audit_returns_a_bound_from_m_canaries():
    result = audit_dpsgd(DPSGDConfig(sample_rate=1.0, steps=10, noise_multiplier=2), game=OneRun(30))
    assert result.game == "one-run" and result.canaries == 30 and result.observations.size == 30
    assert 0 <= result.lower_bound.epsilon <= result.upper_bound.epsilon
