"""The data's predicted part of a user's step along a canary's direction, against the analytic gradients of softmax regression."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.user_data_gradients import user_data_moments
from dpaudit.mechanisms.dpsgd.data import TrainingData

sys.path.insert(0, str(Path(__file__).parents[3] / "docs" / "examples"))
loops = importlib.import_module("numpy_dpsgd")


def _analytic(theta, x, y):
    p = loops.probabilities(theta, x)
    p[np.arange(len(y)), y] -= 1.0
    return np.concatenate([(x[:, :, None] * p[:, None, :]).reshape(len(y), loops.WEIGHTS), p], axis=1)


@pytest.mark.parametrize("clip", [0.3, 100.0])
def test_the_predicted_mean_and_variance_are_the_clipped_rows_along_the_direction(clip):
    rng = np.random.default_rng(0)
    x, y = rng.random((30, loops.FEATURES)), rng.integers(0, loops.CLASSES, 30)
    theta = rng.normal(0, 0.1, loops.SIZE)
    support = np.arange(loops.WEIGHTS, loops.SIZE)  # the biases
    units = rng.normal(size=(2, len(support)))
    units /= np.linalg.norm(units, axis=1, keepdims=True)
    q = 0.2
    mean, variance = user_data_moments(theta[None], [units], support, losses=loops.losses,
                                       data=TrainingData("t", x, y, loops.CLASSES), clip_norm=clip, sample_rate=q)
    g = _analytic(theta, x, y)
    clipped = g * np.minimum(1, clip / np.linalg.norm(g, axis=1, keepdims=True))
    along = clipped[:, support] @ units.T
    assert mean[0] == pytest.approx(q * along.sum(axis=0), rel=1e-3, abs=1e-4)
    assert variance[0] == pytest.approx(q * (1 - q) * (along**2).sum(axis=0), rel=1e-3, abs=1e-5)
