"""The data's predicted part of a user's step along a canary's direction, against the analytic gradients of softmax regression."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.numeric_gradients import RELATIVE_STEP
from dpaudit.attacks.dpsgd.user_data_gradients import SAMPLED_ROWS, sampled_rows, user_data_moments
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


def test_the_rows_read_are_fixed_by_their_number_alone():
    few = sampled_rows(SAMPLED_ROWS)
    assert np.array_equal(few, np.arange(SAMPLED_ROWS)) and np.array_equal(sampled_rows(500, None), np.arange(500))
    many = sampled_rows(3 * SAMPLED_ROWS)
    assert np.array_equal(many, sampled_rows(3 * SAMPLED_ROWS)) and len(np.unique(many)) == SAMPLED_ROWS
    assert np.all(np.diff(many) > 0) and many[-1] < 3 * SAMPLED_ROWS


def test_up_to_the_sample_size_every_row_is_read_and_the_moments_are_exact():
    support = np.arange(loops.WEIGHTS, loops.SIZE)
    units = np.eye(len(support))[:2]
    both = [user_data_moments(THETAS, [units, units], support, losses=loops.losses, data=DATA, clip_norm=0.3,
                              sample_rate=0.2, sample=sample) for sample in (None, len(DATA.y))]
    assert all(np.array_equal(a, b) for a, b in zip(*both))


def _many_rows(labels: int) -> TrainingData:
    """Return 4·SAMPLED_ROWS random rows with labels among the first `labels` classes."""
    rng = np.random.default_rng(5)
    n = 4 * SAMPLED_ROWS
    return TrainingData("many", rng.random((n, loops.FEATURES)), rng.integers(0, labels, n), loops.CLASSES)


def _clipped_along(theta, data, clip, support, unit):
    g = _analytic(theta, data.x, data.y)
    return (g * np.minimum(1, clip / np.linalg.norm(g, axis=1, keepdims=True)))[:, support] @ unit


SUPPORT = np.arange(loops.WEIGHTS, loops.SIZE)
UNIT = np.random.default_rng(6).normal(size=(1, len(SUPPORT)))
UNIT /= np.linalg.norm(UNIT)


def test_above_the_sample_size_the_moments_are_the_sampled_rows_scaled_up_and_widened_by_the_estimates_variance():
    data, q, clip = _many_rows(loops.CLASSES), 0.1, 0.5
    mean, variance = user_data_moments(THETAS[1][None], [UNIT], SUPPORT, losses=loops.losses, data=data,
                                       clip_norm=clip, sample_rate=q)
    rows, n, k = sampled_rows(data.rows), data.rows, SAMPLED_ROWS
    a = _clipped_along(THETAS[1], data, clip, SUPPORT, UNIT[0])[rows]
    row_error = RELATIVE_STEP / 8 * np.sqrt(len(SUPPORT))  # as in the test above
    assert abs(mean[0, 0] - q * n / k * a.sum()) <= q * n * row_error
    expected = q * (1 - q) * n / k * (a**2).sum() + q**2 * n * n * (1 - k / n) / k * a.var(ddof=1)
    assert abs(variance[0, 0] - expected) <= 4 * q * n * n / k * (np.abs(a).max() + row_error) * row_error


@pytest.mark.parametrize("labels", [1, loops.CLASSES])
def test_the_sampled_moments_approximate_the_moments_of_every_row(labels):
    """k of n rows estimate n·mean(a) with standard deviation n·√((1 − k/n)/k)·sd(a) (a = a row's clipped projection);
    the fixed sample is one draw, so it lands within 4 of them but for a chance of 6·10⁻⁵ (Gaussian tail). One label:
    the rows' projections share a sign, so a sum not scaled up by n/k would fall outside."""
    data, q, clip = _many_rows(labels), 0.1, 0.5
    full, sampled = (user_data_moments(THETAS[1][None], [UNIT], SUPPORT, losses=loops.losses, data=data, clip_norm=clip,
                                       sample_rate=q, sample=sample) for sample in (None, SAMPLED_ROWS))
    a, n = _clipped_along(THETAS[1], data, clip, SUPPORT, UNIT[0]), data.rows
    spread = np.sqrt((1 - SAMPLED_ROWS / n) / SAMPLED_ROWS)
    assert abs(sampled[0][0, 0] - full[0][0, 0]) <= 4 * q * n * spread * a.std()
    estimate = q**2 * n * n * (1 - SAMPLED_ROWS / n) / SAMPLED_ROWS  # the widening, per unit of the rows' variance
    error = 4 * q * (1 - q) * n * spread * (a**2).std() + 4 * estimate * ((a - a.mean())**2).std() / np.sqrt(SAMPLED_ROWS)
    assert abs(sampled[1][0, 0] - estimate * a.var() - full[1][0, 0]) <= error
