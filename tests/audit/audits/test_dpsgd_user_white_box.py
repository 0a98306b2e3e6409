"""White-box audits of a user's own numpy DP-SGD loop: every step's parameters, canaries that reach C, auditor-picked data."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.clip_reach import LADDER, REACH
from dpaudit.attacks.games import OneRun
from dpaudit.audit.audits.dpsgd import audit_dpsgd
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

sys.path.insert(0, str(Path(__file__).parents[3] / "docs" / "examples"))
loops = importlib.import_module("numpy_dpsgd")

DIGITS = load_data("digits")
SIGMA, RATE, STEPS, LR = 2.1457, 0.1, 50, 0.5  # PLD ε = 1.50 at δ = 1e-5 (test_the_claim_is_near_1_5)
EVENT = poisson_event(SIGMA, RATE, STEPS)


def _target(bug=None, clip=1.0, stated=False, iterates=True):
    settings = dict(clip_norm=clip, noise_multiplier=SIGMA, sample_rate=RATE, learning_rate=LR) if stated else {}
    train = loops.make_train(sigma=SIGMA, clip=clip, rate=RATE, steps=STEPS, lr=LR, bug=bug, iterates=iterates)
    return UserTrainer(train=train, losses=loops.losses, x=DIGITS.x, y=DIGITS.y, claim=Claim(1.5, 1e-5),
                       event=EVENT, **settings)


def test_the_claim_is_near_1_5():
    assert abs(pld_epsilon(EVENT, 1e-5) - 1.5) < 0.01


def test_biases_left_out_of_clipping_are_a_certified_violation_on_20_rows():
    result = audit_dpsgd(target=_target("bias-unclipped", clip=0.1), threat="white-box", canary="crafted",
                         runs=300, dataset=20, seed=0)
    assert result.verdict == "violation" and result.lower_bound.assumption is None
    assert result.attack["dataset"] == "20 of the user's 1797 rows (drawn from the seed)"
    assert result.attack["training_rows"] == 20 and len(result.attack["canary_magnitudes"]) == len(LADDER)
    assert "best of 3 canaries" in result.lower_bound.method


def test_noise_not_scaled_by_c_is_flagged_with_a_canary_that_reaches_the_stated_c():
    result = audit_dpsgd(target=_target("noise-unscaled", clip=10.0, stated=True), threat="white-box",
                         canary="crafted", runs=100, dataset=20, seed=1)
    assert result.verdict == "violation"
    (magnitude,) = result.attack["canary_magnitudes"]
    assert magnitude >= np.sqrt((REACH * 10.0) ** 2 / 2 - 1)  # ‖∇‖ ≤ √2·√(a² + 1) must reach 2·C = 20


def test_the_correct_loop_is_consistent_on_20_rows_and_the_upper_bound_is_its_event():
    result = audit_dpsgd(target=_target(), threat="white-box", canary="crafted", runs=200, dataset=20, seed=2)
    assert result.verdict == "consistent"
    assert result.upper_bound.epsilon == pytest.approx(1.5, abs=0.01)


def test_one_run_white_box_of_a_user_loop_with_stated_settings():
    result = audit_dpsgd(target=_target(stated=True), threat="white-box", canary="crafted", game=OneRun(40),
                         dataset="canaries", seed=3)
    assert result.game == "one-run" and result.attack["dataset"] == "the canaries alone"
    assert result.observations.scores.shape == (40,) and result.verdict == "consistent"


def test_white_box_needs_every_steps_parameters():
    with pytest.raises(InvalidParameterError, match="every step's parameters"):
        audit_dpsgd(target=_target(iterates=False), threat="white-box", canary="crafted", runs=10, dataset=20)


def test_black_box_takes_the_last_row_of_the_iterates():
    result = audit_dpsgd(target=_target(), threat="black-box", canary="crafted", runs=10, dataset=20)
    assert result.attack["threat"] == "black-box" and result.observations.scores.shape == (10,)


def test_bad_settings_and_datasets_are_one_sentence():
    with pytest.raises(InvalidParameterError, match="all four step settings or none; sample_rate, learning_rate missing"):
        UserTrainer(train=loops.make_train(sigma=1.0), losses=loops.losses, x=DIGITS.x, y=DIGITS.y, claim=Claim(1.0),
                    clip_norm=1.0, noise_multiplier=1.0)
    with pytest.raises(InvalidParameterError, match="picks what a UserTrainer trains on"):
        audit_dpsgd(dataset=20, runs=10)
    with pytest.raises(InvalidParameterError, match="dataset"):
        audit_dpsgd(target=_target(), dataset="half", runs=10)
    with pytest.raises(InvalidParameterError, match="through the hook"):
        audit_dpsgd(target=_target(), canary="dirac", runs=10, dataset=20)


def test_a_loop_that_cannot_train_on_the_canaries_alone_fails_in_one_sentence():
    # With every canary out the dataset is empty; this loop divides by q·n = 0.
    with pytest.raises(MechanismError, match="non-finite"):
        audit_dpsgd(target=_target(), threat="black-box", canary="crafted", runs=40, dataset="canaries")


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["user", 20])
def test_the_correct_loop_is_not_flagged_over_20_seeds(dataset):
    verdicts = [audit_dpsgd(target=_target(), threat="white-box", canary="crafted", runs=200, dataset=dataset,
                            seed=seed).verdict for seed in range(20)]
    # A correct loop is flagged with probability ≤ 0.05 per seed: 4 or more of 20 has probability < 0.016.
    assert verdicts.count("violation") <= 3


def test_the_stated_settings_score_normalises_by_rows_fixed_before_the_game():
    from dpaudit.attacks.dpsgd.user_canaries import user_canaries
    from dpaudit.mechanisms.dpsgd.trainer import Insertions

    target = _target(stated=True).on_rows(np.arange(5))
    rng = np.random.default_rng(0)
    canaries = user_canaries("crafted", 1, target, rng, ladder=False, target="quiet")
    for included in ([True], [False]):
        insert = canaries.insertions(np.array(included))
        trajectory = target.train(None, insert, np.random.default_rng(1), keep_iterates=True)
        assert trajectory.rows == 5  # the data the audit chose, whatever canaries joined the run
    assert isinstance(insert, Insertions)


@pytest.mark.slow
def test_a_loop_dividing_by_a_fixed_batch_is_not_flagged_on_the_canaries_alone_over_seeds():
    # Before the normaliser was fixed, the stated-settings score turned each update back with q·rows, rows counting the
    # canary of the run: on the canaries alone it read membership, and 10 of 10 seeds certified above the true ε.
    from scipy.stats import binom

    fixed_batch = loops.make_train(sigma=SIGMA, rate=RATE, steps=STEPS, lr=LR, batch=RATE * 1797)
    settings = dict(clip_norm=1.0, noise_multiplier=SIGMA, sample_rate=RATE, learning_rate=LR, batch_size=RATE * 1797)
    target = UserTrainer(train=fixed_batch, losses=loops.losses, x=DIGITS.x, y=DIGITS.y, claim=Claim(1.5, 1e-5),
                         event=EVENT, **settings)
    flagged = sum(audit_dpsgd(target=target, threat="white-box", canary="crafted", runs=200, dataset="canaries",
                              seed=seed).verdict == "violation" for seed in range(10))
    assert flagged <= binom.ppf(0.99, 10, 0.05)
