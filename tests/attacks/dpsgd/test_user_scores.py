"""Scores of canaries in a user's own loop: numerical gradients, canaries that reach C, per-step statistics."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.canaries import DPSGDCanaries
from dpaudit.attacks.dpsgd.clip_reach import LADDER, REACH, reaching_canaries
from dpaudit.attacks.dpsgd.numeric_gradients import loss_gradients, touched
from dpaudit.attacks.dpsgd.scores import likelihood_ratio_sum
from dpaudit.attacks.dpsgd.user_scores import noise_scales, user_white_box_scores
from dpaudit.mechanisms.dpsgd.data import TrainingData, load_data
from dpaudit.mechanisms.dpsgd.step_settings import StepSettings
from scipy import stats

sys.path.insert(0, str(Path(__file__).parents[3] / "docs" / "examples"))
loops = importlib.import_module("numpy_dpsgd")

DIGITS = load_data("digits")


def _analytic_gradients(theta, x, y):
    p = loops.probabilities(theta, x)
    p[np.arange(len(y)), y] -= 1.0
    return np.concatenate([(x[:, :, None] * p[:, None, :]).reshape(len(y), -1), p], axis=1)


def test_numerical_gradients_match_the_analytic_ones_in_float32_too():
    rng = np.random.default_rng(0)
    theta, x, y = rng.normal(0, 0.3, loops.SIZE), DIGITS.x[:3].astype(np.float64), DIGITS.y[:3]
    exact = _analytic_gradients(theta, x, y)
    coords = np.arange(loops.SIZE)
    assert np.allclose(loss_gradients(loops.losses, theta, x, y, coords), exact, atol=1e-6)
    float32 = lambda p, xx, yy: loops.losses(np.float32(p), np.float32(xx), yy).astype(np.float32)  # noqa: E731
    assert np.allclose(loss_gradients(float32, theta, x, y, coords), exact, atol=2e-3)


def test_touched_coordinates_are_the_canarys_feature_weights_and_the_biases():
    x = np.zeros((1, loops.FEATURES))
    x[0, 5] = 3.0
    found = touched(loops.losses, np.zeros(loops.SIZE), x, np.array([2]))
    expected = np.concatenate([5 * loops.CLASSES + np.arange(loops.CLASSES), loops.WEIGHTS + np.arange(loops.CLASSES)])
    assert np.array_equal(found, expected)


@pytest.mark.parametrize("clip_norm", [0.1, 1.0, 10.0, 300.0])
def test_crafted_canaries_reach_the_stated_clip_norm(clip_norm):
    theta0 = np.random.default_rng(1).normal(0, 0.1, loops.SIZE)
    made = reaching_canaries(3, data=DIGITS, theta0=theta0, clip_norm=clip_norm, losses=loops.losses,
                             rng=np.random.default_rng(0), per_norm=False)
    norms = np.linalg.norm(_analytic_gradients(theta0, made.x.astype(np.float64), made.y), axis=1)
    assert np.all(norms >= REACH * clip_norm)
    smaller = made.x.astype(np.float64) / 2  # the grid doubles: half the magnitude falls short, unless it is 0
    short = np.linalg.norm(_analytic_gradients(theta0, smaller, made.y), axis=1) < REACH * clip_norm
    assert np.all(short | (made.magnitudes <= 2.0**-6))
    assert np.all(np.count_nonzero(made.x, axis=1) <= 1) and set(np.flatnonzero(made.x.any(axis=0))) <= set(DIGITS.unused_features())


def test_without_a_clip_norm_the_ladder_has_one_canary_per_norm_each_reaching_it():
    theta0 = np.zeros(loops.SIZE)
    made = reaching_canaries(1, data=DIGITS, theta0=theta0, clip_norm=None, losses=loops.losses,
                             rng=np.random.default_rng(0), per_norm=True)
    norms = np.linalg.norm(_analytic_gradients(theta0, made.x.astype(np.float64), made.y), axis=1)
    assert made.size == len(LADDER) and np.all(norms >= np.array(LADDER))
    assert made.magnitudes[0] == 0.0  # the zero input: its gradient is the bias gradient alone


def test_without_an_unused_feature_the_canaries_take_the_least_used_ones():
    x = np.tile(np.array([[0.9, 0.05, 0.5]], dtype=np.float32), (5, 1))
    dense = TrainingData("dense", x, np.zeros(5, dtype=np.int64), 2)
    losses = lambda p, xx, yy: np.log1p(np.exp(-(2 * yy - 1) * (np.asarray(xx) @ p)))  # noqa: E731
    made = reaching_canaries(2, data=dense, theta0=np.zeros(3), clip_norm=1.0, losses=losses,
                             rng=np.random.default_rng(0), per_norm=False)
    assert np.all(np.flatnonzero(made.x[0]) == [1]) and np.all(np.flatnonzero(made.x[1]) == [2])


def _noisy_iterates(steps, size, scale, rng, shift=None):
    updates = rng.normal(0.0, scale, (steps, size))
    if shift is not None:
        updates += shift
    return np.vstack([np.zeros(size), -np.cumsum(updates, axis=0)])


def test_with_stated_settings_a_dirac_canary_scores_as_dpauditss_own_white_box_statistic():
    settings = StepSettings(clip_norm=2.0, noise_multiplier=1.5, sample_rate=0.2, learning_rate=0.5)
    rows, size, rng = 100, 30, np.random.default_rng(2)
    unit_noise = settings.noise_multiplier * settings.clip_norm / settings.sum_scale(rows)
    iterates = _noisy_iterates(40, size, unit_noise, rng)
    gradients = np.zeros((2, size))
    gradients[0, 3], gradients[1, 7] = 10.0, 0.5
    got = user_white_box_scores(iterates, DPSGDCanaries("dirac", gradients=gradients), losses=None,
                                settings=settings, rows=rows)
    updates = iterates[:-1] - iterates[1:]
    x = updates[:, [3, 7]] * settings.sum_scale(rows) / 3.0
    mu = np.array([[2.0, 0.5]]) / 3.0
    assert np.allclose(got, likelihood_ratio_sum(x, np.broadcast_to(mu, x.shape), 0.2))


def test_the_setting_free_score_is_standard_normal_per_step_without_the_canary():
    rng = np.random.default_rng(3)
    size, steps, runs = 650, 25, 200
    gradients = np.zeros((1, size))
    gradients[0, 11] = 1.0
    canary = DPSGDCanaries("dirac", gradients=gradients)
    scores = [user_white_box_scores(_noisy_iterates(steps, size, 0.37, rng), canary, losses=None, settings=None,
                                    rows=1)[0] for _ in range(runs)]
    # Σ of `steps` N(0, 1) (up to the 1.4826·MAD estimate of 0.37): N(0, steps); a KS test at level 0.001.
    assert stats.kstest(np.array(scores) / np.sqrt(steps), "norm").pvalue > 1e-3


def test_noise_scales_ignore_a_few_moving_coordinates():
    rng = np.random.default_rng(4)
    updates = rng.normal(0.0, 2.0, (5, 4000))
    updates[:, :40] += 100.0  # a few coordinates the data moves
    assert np.allclose(noise_scales(updates), 2.0, rtol=0.08)  # MAD's standard error at n = 4000 is about 2%
    assert np.all(noise_scales(np.zeros((2, 10))) > 0)


def test_input_canary_scores_see_a_canary_in_every_step_of_a_user_loop():
    train = loops.make_train(sigma=1.0, clip=1.0, rate=1.0, steps=20, lr=0.5)
    settings = StepSettings(clip_norm=1.0, noise_multiplier=1.0, sample_rate=1.0, learning_rate=0.5)
    x, y = DIGITS.x[:20].astype(np.float64), DIGITS.y[:20]
    made = reaching_canaries(1, data=TrainingData("d", x, y, 10), theta0=np.zeros(loops.SIZE), clip_norm=1.0,
                             losses=loops.losses, rng=np.random.default_rng(0), per_norm=True)
    out_scores, in_scores = [], []
    for seed in range(30):
        for with_canary, into in ((False, out_scores), (True, in_scores)):
            xx = np.vstack([x, made.x]) if with_canary else x
            yy = np.concatenate([y, made.y]) if with_canary else y
            iterates = train(xx, yy, np.random.default_rng(seed))
            into.append(user_white_box_scores(iterates, made, losses=loops.losses, settings=settings, rows=len(yy))[0])
    # Full batch, canary clipped to C, noise σC: the statistic is N(±T·μ²/2, T·μ²) with T·μ² = 20: means 4.5σ apart.
    assert np.mean(in_scores) - np.mean(out_scores) > 3 * np.sqrt(20)
