"""One protocol for every DP-SGD target: dpaudit's trainer (and its bugs), Opacus and a user's loop carry name, claim, event."""

import numpy as np
import pytest
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.accounting import actual_event, claimed_event, pld_epsilon
from dpaudit.mechanisms.dpsgd.builtin_target import BuiltinTarget
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.target import DPSGDTarget, resolve_target
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer


def _user():
    x, y = np.eye(4, dtype=np.float32), np.arange(4) % 2
    return UserTrainer(train=lambda x, y, rng: np.zeros((2, 3)), losses=lambda p, x, y: np.zeros(len(y)), x=x, y=y,
                       claim=Claim(1.0, 1e-5), name="mine")


def test_every_target_follows_the_protocol():
    config = DPSGDConfig(steps=3)
    for target in (BuiltinTarget(config), BuiltinTarget(config, "opacus"), _user()):
        assert isinstance(target, DPSGDTarget)


def test_a_named_bug_claims_what_its_code_claims_and_its_event_is_what_it_does():
    config = DPSGDConfig(steps=3, bug="accountant-rate")
    target = resolve_target("dpaudit", config)
    rows = target.data.rows
    assert target.name == "dpsgd_accountant-rate" and target.label == "dpaudit" and target.runner == "dpaudit"
    assert target.claim.epsilon == pytest.approx(pld_epsilon(claimed_event(config, rows), config.delta))
    assert target.event == actual_event(config, rows) and not target.picks_dataset


def test_a_users_loop_is_resolved_as_itself():
    user = _user()
    assert resolve_target(user, DPSGDConfig()) is user and user.runner is user and user.picks_dataset
    assert user.label == "mine" and user.params == {} and user.event is None


def test_another_target_is_refused_in_one_sentence():
    with pytest.raises(InvalidParameterError, match="one of dpaudit, opacus or a UserTrainer"):
        resolve_target(42, DPSGDConfig())
    with pytest.raises(InvalidParameterError, match="one of dpaudit, opacus"):
        resolve_target("tensorflow", DPSGDConfig())
    with pytest.raises(InvalidParameterError, match="no bug option"):
        BuiltinTarget(DPSGDConfig(bug="no-clipping"), "opacus")
