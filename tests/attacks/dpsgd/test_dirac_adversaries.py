"""Adversarial gradients against a Dirac canary through the Opacus hook: what shows clipping of the batch's sum."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.adversarial import BATCH_SHARE, DOMINANCE, ROW_SCALE, dirac_adversaries
from dpaudit.attacks.dpsgd.audit_datasets import ADVERSARIAL, FEW_ROWS, USER_DATA, candidate_datasets, user_dataset
from dpaudit.attacks.dpsgd.canaries import DIRAC, DIRAC_SCALE, DPSGDCanaries
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")
sys.path.insert(0, str(Path(__file__).parents[2] / "mechanisms" / "dpsgd"))
loops = importlib.import_module("opacus_loops")
DIGITS = load_data("digits")
TINY = 1e-6  # noise multiplier small enough that each update is the clipped sum to float32 precision


pytestmark = pytest.mark.usefixtures("quiet_opacus")


def _target(bug=None, noise=TINY, steps=1, lr=1.0, batch=180):
    train = loops.make_train("logreg", bug, noise_multiplier=noise, batch_size=batch, steps=steps, learning_rate=lr)
    return UserTrainer(train=train, losses=lambda w, x, y: np.zeros(len(y)), x=DIGITS.x, y=DIGITS.y,
                       claim=Claim(1.0, 1e-5))


@pytest.mark.parametrize("rate", [1.0, 0.1, 0.03])
@pytest.mark.parametrize("data_norm", [0.0, 50.0])
def test_each_dirac_canary_gets_a_batch_share_of_gradients_against_it_that_outweighs_the_rows(rate, data_norm):
    c, size = 2.0, 12
    gradients = np.zeros((2, size), dtype=np.float32)
    gradients[[0, 1], [3, 7]] = DIRAC_SCALE * c
    made = dirac_adversaries(DPSGDCanaries(DIRAC, gradients=gradients), rate, data_norm)
    count = int(np.ceil(BATCH_SHARE / rate))
    assert made.background.shape == (2 * count, size) and count * rate >= BATCH_SHARE
    row = max(ROW_SCALE * c, DOMINANCE * data_norm / BATCH_SHARE)
    np.testing.assert_allclose(made.background[:count, 3], -row, rtol=1e-6)
    assert np.count_nonzero(made.background) == 2 * count and BATCH_SHARE * row >= DOMINANCE * data_norm
    np.testing.assert_allclose(made.gradients[[0, 1], [3, 7]], 2 * BATCH_SHARE * row + c, rtol=1e-6)
    assert np.count_nonzero(made.gradients) == 2
    inserted = made.only(1).insertions(np.array([False])).gradients
    assert np.array_equal(inserted, made.background)  # out: the background alone; in: the canary too
    assert len(made.only(1).insertions(np.array([True])).gradients) == 2 * count + 1


def test_the_dirac_adversarial_dataset_trains_on_the_users_data_with_the_rate_of_its_probe():
    chosen = user_dataset(_target(), ADVERSARIAL, DIRAC, 1, np.random.default_rng(0), ladder=True, dirac_target="quiet")
    assert chosen.trainer.data.rows == DIGITS.rows and chosen.canaries.size == 1
    assert len(chosen.canaries.background) == int(np.ceil(BATCH_SHARE / (179 / DIGITS.rows)))  # Opacus: q = 179/1797
    found = candidate_datasets(_target(), DIRAC, np.random.default_rng(0), dirac_target="quiet")
    assert ADVERSARIAL in [d.key for d in found.datasets]


def _moved(chosen, included):
    """Return how far one noiseless step moves the canary's coordinate (negated update)."""
    coordinate = int(np.flatnonzero(chosen.canaries.gradients[0])[0])
    run = chosen.trainer.train(None, chosen.canaries.insertions(np.array([included])), np.random.default_rng(1),
                               keep_iterates=True)
    return run.iterates[0][coordinate] - run.iterates[1][coordinate]


@pytest.mark.parametrize("bug, low, high", [(None, 0.99, 1.01), ("clip-batch-sum", 1.9, 2.01)])
def test_against_its_background_one_dirac_canary_moves_a_batch_clipped_sum_by_nearly_2c(bug, low, high):
    # Full batches (q = 1). Correct per-example clipping: the canary adds C whatever the rest; clipping the batch's
    # sum: the background (2 gradients against the canary, their sum 4 times the rows') holds the sum at nearly −C
    # along it, and the canary turns it to nearly +C: cos(atan(1/4)) = 0.97 of C each way at least.
    target = _target(bug, batch=None)
    chosen = user_dataset(target, ADVERSARIAL, DIRAC, 1, np.random.default_rng(0), ladder=True, dirac_target="quiet")
    assert len(chosen.canaries.background) == BATCH_SHARE
    shift = (_moved(chosen, True) - _moved(chosen, False)) * DIGITS.rows  # in units of lr·C/B, lr = C = 1, B = n
    assert low <= shift <= high


def test_a_hooked_loop_is_screened_only_on_datasets_where_it_samples_at_its_own_rate():
    # A fixed batch of 180 samples 2 rows at q = 1, not at 179/1797: that dataset would refute the claim of a
    # correct loop, so it is left out; full batches sample at q = 1 on every dataset, so nothing is left out.
    fixed_batch = candidate_datasets(_target(), DIRAC, np.random.default_rng(0), dirac_target="quiet")
    assert [d.key for d in fixed_batch.datasets] == [ADVERSARIAL, USER_DATA]
    full_batch = candidate_datasets(_target(batch=None), DIRAC, np.random.default_rng(0), dirac_target="quiet")
    assert [d.key for d in full_batch.datasets] == [FEW_ROWS, ADVERSARIAL, USER_DATA]
