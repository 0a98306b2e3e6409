"""Adversarial datasets and the candidate datasets of dataset="auto": rows against each canary, fixed before the game."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.adversarial import (
    ADVERSARIES,
    CANARY_RATIO,
    OPPOSED,
    ROW_NORM,
    UNITS,
    adversarial_dataset,
    batch_adversarial_dataset,
)
from dpaudit.attacks.dpsgd.audit_datasets import (
    ADVERSARIAL,
    BATCH_ADVERSARIAL,
    CANARIES_ONLY,
    FEW_ROWS,
    USER_DATA,
    candidate_datasets,
    user_dataset,
)
from dpaudit.attacks.dpsgd.clip_reach import LADDER, REACH
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


@pytest.mark.parametrize("dataset", [ADVERSARIAL, BATCH_ADVERSARIAL])
def test_the_adversarial_datasets_are_for_crafted_canaries_only(dataset):
    with pytest.raises(InvalidParameterError, match="crafted"):
        user_dataset(_target(), dataset, "mislabelled", 1, np.random.default_rng(0), ladder=True, dirac_target="quiet")


def _unit_gradients(trainer, canaries):
    """Return the canary's gradient at θ₀ and each unit's summed gradient (rows grouped by unit)."""
    theta0 = np.zeros(loops.SIZE)
    (canary,) = loss_gradients(loops.losses, theta0, canaries.x, canaries.y, ALL)
    rows = loss_gradients(loops.losses, theta0, trainer.data.x, trainer.data.y, ALL)
    return canary, rows, rows.reshape(UNITS, DIGITS.classes, -1).sum(axis=1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_batch_adversarial_unit_points_exactly_against_the_canary_and_a_batch_cannot_outweigh_it(seed):
    trainer, canaries = batch_adversarial_dataset(_target(), np.random.default_rng(seed))
    canary, rows, units = _unit_gradients(trainer, canaries)
    assert trainer.data.rows == UNITS * DIGITS.classes and np.bincount(trainer.data.y).tolist() == [UNITS] * DIGITS.classes
    cosine = units @ canary / (np.linalg.norm(units, axis=1) * np.linalg.norm(canary))
    assert np.all(cosine <= -0.999)  # the bias gradients of a unit cancel at uniform predictions
    assert np.linalg.norm(rows, axis=1).max() >= ROW_NORM
    assert np.linalg.norm(canary) >= CANARY_RATIO * ROW_NORM
    assert np.linalg.norm(canary) > np.linalg.norm(units[: UNITS // 5].sum(axis=0))  # a batch at q = 0.2


def test_batch_adversarial_rows_reach_the_stated_clip_norm():
    c = 0.5
    trainer, canaries = batch_adversarial_dataset(_target(clip=c, stated=True), np.random.default_rng(0))
    canary, rows, _ = _unit_gradients(trainer, canaries)
    assert np.linalg.norm(rows, axis=1).max() >= REACH * c and np.linalg.norm(canary) >= CANARY_RATIO * REACH * c


def test_batch_adversarial_is_left_out_of_auto_and_refused_by_name_without_a_finite_crafted_input():
    unused = DIGITS.unused_features()

    def overflowing(params, x, y):  # not finite on any input that uses a feature the data never use
        return np.where(np.abs(x[:, unused]).max(axis=1) > 0, np.inf, loops.losses(params, x, y))

    target = UserTrainer(train=loops.make_train(sigma=2.0, steps=3), losses=overflowing, x=DIGITS.x, y=DIGITS.y,
                         claim=Claim(1.0, 1e-5))
    assert batch_adversarial_dataset(target, np.random.default_rng(0)) is None
    with pytest.raises(InvalidParameterError, match="no row can oppose"):
        user_dataset(target, BATCH_ADVERSARIAL, "crafted", 1, np.random.default_rng(0), ladder=True, dirac_target="quiet")
    found = candidate_datasets(target, "crafted", np.random.default_rng(0), dirac_target="quiet")
    assert BATCH_ADVERSARIAL not in [d.key for d in found.datasets]
    assert any(why.startswith(f"{BATCH_ADVERSARIAL}: the losses are not finite") for why in found.failed)


def test_auto_screens_five_datasets_and_drops_one_the_loop_cannot_train_on():
    fixed_batch = loops.make_train(sigma=2.0, steps=3, batch=180.0)  # trains on no rows: it never divides by n
    found = candidate_datasets(_target(train=fixed_batch), "crafted", np.random.default_rng(0), dirac_target="quiet")
    assert [d.key for d in found.datasets] == [CANARIES_ONLY, FEW_ROWS, ADVERSARIAL, BATCH_ADVERSARIAL, USER_DATA]
    assert [d.trainer.data.rows for d in found.datasets][1::3] == [FEW_ROWS, DIGITS.rows]
    assert found.failed == ()
    divides_by_n = loops.make_train(sigma=2.0, steps=3)  # q·n = 0 without rows: non-finite parameters
    found = candidate_datasets(_target(train=divides_by_n), "crafted", np.random.default_rng(0), dirac_target="quiet")
    assert [d.key for d in found.datasets] == [FEW_ROWS, ADVERSARIAL, BATCH_ADVERSARIAL, USER_DATA]
    assert len(found.failed) == 1 and found.failed[0].startswith("the canaries alone: ")
    assert "non-finite parameters" in found.failed[0]


def test_mislabelled_canaries_are_never_played_alone_or_against_adversaries():
    found = candidate_datasets(_target(), "mislabelled", np.random.default_rng(0), dirac_target="quiet")
    assert [d.key for d in found.datasets] == [FEW_ROWS, USER_DATA]
