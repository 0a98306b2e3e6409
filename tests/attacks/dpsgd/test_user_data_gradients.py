"""The data's predicted part of a user's step along a canary's direction, against the analytic gradients of softmax regression."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.numeric_gradients import RELATIVE_STEP
from dpaudit.attacks.dpsgd.user_data_gradients import user_data_moments
from dpaudit.mechanisms.dpsgd.data import TrainingData

sys.path.insert(0, str(Path(__file__).parents[3] / "docs" / "examples"))
loops = importlib.import_module("numpy_dpsgd")


def _analytic(theta, x, y):
    p = loops.probabilities(theta, x)
    p[np.arange(len(y)), y] -= 1.0
    return np.concatenate([(x[:, :, None] * p[:, None, :]).reshape(len(y), loops.WEIGHTS), p], axis=1)


RNG = np.random.default_rng(0)
DATA = TrainingData("t", RNG.random((30, loops.FEATURES)), RNG.integers(0, loops.CLASSES, 30), loops.CLASSES)
THETAS = RNG.normal(0, 0.1, (2, loops.SIZE))


# One data object for every case, so that clip factors kept from an earlier case (another C or θ) would show.
@pytest.mark.parametrize("clip", [0.3, 100.0, 0.3])
@pytest.mark.parametrize("start", [0, 1])
def test_the_predicted_mean_and_variance_are_the_clipped_rows_along_the_direction(clip, start):
    theta, x, y = THETAS[start], DATA.x, DATA.y
    support = np.arange(loops.WEIGHTS, loops.SIZE)  # the biases
    units = np.random.default_rng(start).normal(size=(2, len(support)))
    units /= np.linalg.norm(units, axis=1, keepdims=True)
    q = 0.2
    mean, variance = user_data_moments(theta[None], [units], support, losses=loops.losses, data=DATA, clip_norm=clip,
                                       sample_rate=q)
    g = _analytic(theta, x, y)
    clipped = g * np.minimum(1, clip / np.linalg.norm(g, axis=1, keepdims=True))
    along = clipped[:, support] @ units.T
    # Forward differences of step h err by at most h/2 · max ℓ'' ≤ h/8 per bias coordinate (softmax: p(1 − p) ≤ 1/4),
    # so a row's projection by at most h/8 · √|support|.
    row_error = RELATIVE_STEP / 8 * np.sqrt(len(support))
    assert np.all(np.abs(mean[0] - q * along.sum(axis=0)) <= q * len(y) * row_error)
    assert np.all(np.abs(variance[0] - q * (1 - q) * (along**2).sum(axis=0))
                  <= q * (1 - q) * ((2 * np.abs(along) + row_error) * row_error).sum(axis=0))
