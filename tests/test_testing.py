"""`dpaudit.testing.assert_private`: passes correct mechanisms, fails wrong ones with ε and a command that reproduces it."""

import json
import warnings

import numpy as np
import pytest
from dpaudit.audit.cli import main
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import blackbox, get_mechanism
from dpaudit.testing import PrivacyViolation, assert_private
from scipy.stats import binom

ONE_ROUND = 100_000


def _laplace_sum(scale):
    def mechanism(data, rng, size=1):
        return float(np.sum(data)) + rng.laplace(0.0, scale, size)
    return mechanism


def test_a_correct_mechanism_passes_and_its_audit_is_returned():
    result = assert_private(get_mechanism("laplace", epsilon=1.0), max_trials=4 * ONE_ROUND)
    assert result.verdict == "consistent" and "auto" in result.to_dict()["lower_bound"]


def test_a_wrong_builtin_fails_with_its_certified_epsilon_and_a_cli_command_that_reproduces_it(capsys):
    mech = get_mechanism("histogram_wrong_sensitivity", epsilon=1.0)
    with pytest.raises(PrivacyViolation) as caught:
        assert_private(mech, max_trials=4 * ONE_ROUND, seed=3)
    message, result = str(caught.value), caught.value.result
    assert f"{result.lower_bound.epsilon:.4f}" in message and result.lower_bound.epsilon > 1.0
    command = message.split("Reproduce: ", 1)[1]
    assert command.startswith("dpaudit audit histogram_wrong_sensitivity")
    assert main(command.split()[1:] + ["--json"]) == 1
    assert json.loads(capsys.readouterr().out)["lower_bound"]["epsilon"] == result.lower_bound.epsilon


class _Clock:
    """A clock that advances `step` seconds at every reading: a machine `step` times slower per reading."""

    def __init__(self, step):
        self.now, self.step = 0.0, step

    def __call__(self):
        self.now += self.step
        return self.now


@pytest.mark.parametrize("mech", [get_mechanism("histogram_wrong_sensitivity", epsilon=1.0),
                                  get_mechanism("laplace", epsilon=1.0)])
def test_the_verdict_and_bound_do_not_depend_on_the_machines_speed(mech, monkeypatch):
    outcomes = []
    for step in (1e-6, 30.0):  # a fast machine, and one on which every clock reading is 30 s later
        monkeypatch.setattr("time.perf_counter", _Clock(step))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = assert_private(mech, max_trials=4 * ONE_ROUND, seed=3)
            except PrivacyViolation as caught:
                result = caught.result
        rounds = result.to_dict()["lower_bound"]["auto"]["rounds"]
        outcomes.append((result.verdict, result.lower_bound.epsilon, [r["trials"] for r in rounds]))
    assert outcomes[0] == outcomes[1]


def test_an_audit_longer_than_max_seconds_warns_and_names_max_trials(monkeypatch):
    monkeypatch.setattr("time.perf_counter", _Clock(100.0))
    with pytest.warns(UserWarning, match="smaller max_trials"):
        assert_private(get_mechanism("laplace", epsilon=1.0), max_trials=ONE_ROUND, max_seconds=60)


def test_a_wrong_user_mechanism_names_the_failing_test():
    wrong = blackbox(_laplace_sum(0.5), epsilon=1.0, name="half-scale", null_record=0.0)
    with pytest.raises(AssertionError, match=r"(?s)half-scale breaks its claim .*Reproduce: pytest .*test_a_wrong_user_mechanism"):
        assert_private(wrong, [0.0], [1.0], max_trials=4 * ONE_ROUND)


@pytest.mark.parametrize("replay", [False, True])
def test_a_tight_correct_mechanism_fails_at_most_one_minus_confidence_of_the_time(replay):
    seeds = 40
    exact = blackbox(_laplace_sum(1.0), epsilon=1.0, name="exactly-tight", null_record=0.0)
    failures = 0
    for seed in range(seeds):
        try:
            assert_private(exact, [0.0], [1.0], max_trials=ONE_ROUND, confidence=0.95, seed=seed, replay=replay)
        except PrivacyViolation:
            failures += 1
    assert failures <= binom.ppf(0.999, seeds, 0.05)


def test_with_replay_a_wrong_builtin_fails_with_a_dpaudit_replay_command_that_reproduces_it(capsys):
    mech = get_mechanism("histogram_wrong_sensitivity", epsilon=1.0)
    with pytest.raises(PrivacyViolation) as caught:
        assert_private(mech, max_trials=4 * ONE_ROUND, seed=3, replay=True)
    message, result = str(caught.value), caught.value.result
    assert result.replay.screened > 1 and result.lower_bound.epsilon > 1.0
    command = message.split("Reproduce: ", 1)[1]
    assert command.startswith("dpaudit replay histogram_wrong_sensitivity") and "--search" in command
    assert main(command.split()[1:] + ["--json"]) == 1
    assert json.loads(capsys.readouterr().out)["lower_bound"]["epsilon"] == result.lower_bound.epsilon


def test_with_replay_a_wrong_user_mechanism_names_the_failing_test_and_the_audit_replay_call():
    def raw_sum(data, rng):  # claims sensitivity 1 for records in [0, 1] and never clips them
        return float(np.sum(data)) + rng.laplace(0.0, 1.0)

    wrong = blackbox(raw_sum, epsilon=1.0, name="raw-sum")
    with pytest.raises(PrivacyViolation, match=r"(?s)raw-sum breaks its claim .*Reproduce: pytest .*audit_replay\("):
        assert_private(wrong, [0.2], [0.2, 3.0], max_trials=ONE_ROUND, replay=True)


def test_with_replay_noise_from_outside_the_rng_is_named_in_one_sentence():
    def global_noise(data, rng):
        return float(np.sum(data)) + np.random.laplace(0.0, 1.0)

    with pytest.raises(InvalidParameterError, match="numpy's global random state"):
        assert_private(blackbox(global_noise, epsilon=1.0), [0.0], [0.0, 1.0], max_trials=ONE_ROUND, replay=True)


@pytest.mark.parametrize("replay", ["yes", 1, None])
def test_replay_is_true_or_false(replay):
    with pytest.raises(InvalidParameterError, match="'replay' parameter of assert_private"):
        assert_private(get_mechanism("laplace", epsilon=1.0), replay=replay)

