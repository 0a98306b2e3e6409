"""One name, one meaning on every entry point: default runs and canaries, the fewest runs, `canary="auto"`."""

import importlib
import inspect
import sys
from pathlib import Path

import pytest
from dpaudit.attacks.games import DEFAULT_CANARIES, DEFAULT_RUNS, MIN_RUNS, TRAINING_CANARIES, TRAINING_RUNS, MultiRun, OneRun
from dpaudit.audit.audits.canaries import audit_canaries
from dpaudit.audit.audits.dpsgd import audit_dpsgd
from dpaudit.audit.audits.tracing import audit_tracing
from dpaudit.audit.cli import canary_cmd, dpsgd_cmd, trace_cmd
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.accounting import poisson_event
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

sys.path.insert(0, str(Path(__file__).parents[3] / "docs" / "examples"))
loops = importlib.import_module("numpy_dpsgd")


def test_draws_of_a_mechanism_default_to_the_same_runs_in_python_and_on_the_command_line():
    for audit in (audit_canaries, audit_tracing):
        assert inspect.signature(audit).parameters["game"].default == MultiRun(DEFAULT_RUNS)
    assert MultiRun() == MultiRun(DEFAULT_RUNS) and OneRun().canaries == DEFAULT_CANARIES
    assert canary_cmd.GAME.runs == trace_cmd.GAME.runs == DEFAULT_RUNS
    assert canary_cmd.GAME.canaries == DEFAULT_CANARIES


def test_training_runs_default_to_the_training_runs_in_python_and_on_the_command_line():
    assert (dpsgd_cmd.GAME.runs, dpsgd_cmd.GAME.canaries) == (TRAINING_RUNS, TRAINING_CANARIES)
    assert "default TRAINING_RUNS" in inspect.getdoc(audit_dpsgd)


def test_every_multi_run_game_refuses_fewer_than_the_same_fewest_runs():
    MultiRun(MIN_RUNS)
    with pytest.raises(InvalidParameterError, match=f"≥ {MIN_RUNS}"):
        MultiRun(MIN_RUNS - 1)
    with pytest.raises(InvalidParameterError, match=f"≥ {MIN_RUNS}"):
        audit_dpsgd(runs=MIN_RUNS - 1)


def test_auto_plays_dirac_canaries_in_dpaudits_trainer_and_crafted_ones_in_a_loop_without_the_hook():
    quick = DPSGDConfig(sample_rate=1.0, steps=2, noise_multiplier=2)
    assert audit_dpsgd(quick, runs=MIN_RUNS, seed=0).attack["canary"] == "dirac"
    digits = load_data("digits")
    loop = UserTrainer(train=loops.make_train(sigma=2.0, steps=3), losses=loops.losses, x=digits.x, y=digits.y,
                       claim=Claim(1.5, 1e-5), event=poisson_event(2.0, 0.1, 3))
    played = audit_dpsgd(target=loop, threat="white-box", runs=MIN_RUNS, dataset=2, seed=0)
    assert played.attack["canary"] == "crafted"
