"""Adversarial datasets and the candidate datasets of dataset="auto": rows against each canary, fixed before the game."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.adversarial import ADVERSARIES, OPPOSED, adversarial_dataset
from dpaudit.attacks.dpsgd.audit_datasets import ADVERSARIAL, CANARIES_ONLY, FEW_ROWS, USER_DATA, candidate_datasets, user_dataset
from dpaudit.attacks.dpsgd.clip_reach import LADDER
from dpaudit.attacks.dpsgd.numeric_gradients import loss_gradients
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

sys.path.insert(0, str(Path(__file__).parents[3] / "docs" / "examples"))
loops = importlib.import_module("numpy_dpsgd")
DIGITS = load_data("digits")
ALL = np.arange(loops.SIZE)


def _target(clip=1.0, stated=False, train=None):
    settings = dict(clip_norm=clip, noise_multiplier=2.0, sample_rate=0.1, learning_rate=0.5) if stated else {}
    train = train or loops.make_train(sigma=2.0, clip=clip, steps=3)
    return UserTrainer(train=train, losses=loops.losses, x=DIGITS.x, y=DIGITS.y, claim=Claim(1.0, 1e-5), **settings)


def test_adversarial_rows_oppose_each_canary_and_reach_a_share_of_its_norm():
    trainer, canaries = adversarial_dataset(_target(), np.random.default_rng(0), ladder=True)
    theta0 = np.zeros(loops.SIZE)
    grads = loss_gradients(loops.losses, theta0, canaries.x, canaries.y, ALL)
    rows = loss_gradients(loops.losses, theta0, trainer.data.x, trainer.data.y, ALL)
    opposed = np.flatnonzero(canaries.magnitudes > 0)
    assert trainer.data.rows == ADVERSARIES * len(opposed) and trainer.user_data.rows == DIGITS.rows
    for k, i in enumerate(opposed):
        block = rows[k * ADVERSARIES:(k + 1) * ADVERSARIES]
        cosine = block @ grads[i] / (np.linalg.norm(block, axis=1) * np.linalg.norm(grads[i]))
        assert np.all(cosine <= OPPOSED)
        assert np.all(np.linalg.norm(block, axis=1) >= LADDER[i] / (ADVERSARIES + 1))


def test_with_the_clip_norm_stated_each_row_reaches_c_and_the_canary_outweighs_all_of_them():
    c = 0.5
    trainer, canaries = adversarial_dataset(_target(clip=c, stated=True), np.random.default_rng(1), ladder=True)
    theta0 = np.zeros(loops.SIZE)
    (canary_norm,) = np.linalg.norm(loss_gradients(loops.losses, theta0, canaries.x, canaries.y, ALL), axis=1)
    row_norms = np.linalg.norm(loss_gradients(loops.losses, theta0, trainer.data.x, trainer.data.y, ALL), axis=1)
    assert canary_norm >= (ADVERSARIES + 1) * c and np.all(row_norms >= c)


def test_the_adversarial_dataset_is_for_crafted_canaries_only():
    with pytest.raises(InvalidParameterError, match="crafted"):
        user_dataset(_target(), ADVERSARIAL, "mislabelled", 1, np.random.default_rng(0), ladder=True, dirac_target="quiet")


def test_auto_screens_four_datasets_and_drops_one_the_loop_cannot_train_on():
    fixed_batch = loops.make_train(sigma=2.0, steps=3, batch=180.0)  # trains on no rows: it never divides by n
    found = candidate_datasets(_target(train=fixed_batch), "crafted", np.random.default_rng(0), dirac_target="quiet")
    assert [d.key for d in found] == [CANARIES_ONLY, FEW_ROWS, ADVERSARIAL, USER_DATA]
    assert [d.trainer.data.rows for d in found][1::2] == [FEW_ROWS, DIGITS.rows]
    divides_by_n = loops.make_train(sigma=2.0, steps=3)  # q·n = 0 without rows: non-finite parameters
    found = candidate_datasets(_target(train=divides_by_n), "crafted", np.random.default_rng(0), dirac_target="quiet")
    assert [d.key for d in found] == [FEW_ROWS, ADVERSARIAL, USER_DATA]


def test_mislabelled_canaries_are_never_played_alone_or_against_adversaries():
    found = candidate_datasets(_target(), "mislabelled", np.random.default_rng(0), dirac_target="quiet")
    assert [d.key for d in found] == [FEW_ROWS, USER_DATA]
