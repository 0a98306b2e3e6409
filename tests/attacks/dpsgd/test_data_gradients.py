"""The data's part of each noisy sum, as the white-box attacker predicts it: exact under full batches."""

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.canaries import DPSGDCanaries
from dpaudit.attacks.dpsgd.data_gradients import data_gradient_moments
from dpaudit.attacks.dpsgd.scores import white_box_scores
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import TrainingData
from dpaudit.mechanisms.dpsgd.flat_model import FlatModel

torch = pytest.importorskip("torch")

MODEL = FlatModel("logreg", features=3, classes=2)
DATA = TrainingData("toy", np.array([[1.0, 0.5, 0.0], [0.2, 1.0, 0.0], [0.9, 0.1, 0.0]], dtype=np.float32),
                    np.array([0, 1, 1]), 2)
USED, UNUSED = 0, 2  # the weight of feature 0 (every example uses it) and of feature 2 (none does), class 0


def _clipped_sum(theta, clip):
    grads = MODEL.per_example_gradients(MODEL.tensor(theta), MODEL.tensor(DATA.x), torch.as_tensor(DATA.y))
    norms = torch.linalg.vector_norm(grads, dim=1, keepdim=True)
    return (grads * torch.clamp(clip / norms, max=1.0)).sum(dim=0).double().numpy()


def _full_batch_run(rng, *, sigma, clip, steps, lr):
    """Return full-batch DP-SGD iterates on DATA (no canary) and each step's noise."""
    thetas, noises = [MODEL.initial(rng).numpy().astype(np.float64)], []
    for _ in range(steps):
        noises.append(rng.normal(0.0, sigma * clip, MODEL.size))
        thetas.append(thetas[-1] - lr / DATA.rows * (_clipped_sum(thetas[-1], clip) + noises[-1]))
    return np.array(thetas), np.array(noises)


def _dirac(coordinate):
    gradients = np.zeros((1, MODEL.size), dtype=np.float32)
    gradients[0, coordinate] = 10.0
    return DPSGDCanaries("dirac", gradients=gradients)


def test_under_full_batches_the_score_net_of_the_data_is_the_noise_only_likelihood_ratio():
    sigma, clip, steps, lr = 1.5, 0.5, 8, 2.0
    thetas, noises = _full_batch_run(np.random.default_rng(0), sigma=sigma, clip=clip, steps=steps, lr=lr)
    config = DPSGDConfig(model="logreg", noise_multiplier=sigma, clip_norm=clip, sample_rate=1.0, steps=steps,
                         learning_rate=lr)
    kwargs = dict(model=MODEL, config=config, sample_rate=1.0, sum_scale=DATA.rows / lr)
    net = white_box_scores(thetas, _dirac(USED), data=DATA, **kwargs)
    x, mu = noises[:, USED] / (sigma * clip), 1 / sigma
    assert net[0] == pytest.approx(np.sum(mu * x - mu**2 / 2), rel=1e-6)
    assert white_box_scores(thetas, _dirac(USED), **kwargs)[0] != pytest.approx(net[0], abs=0.05)


def test_poisson_moments_are_the_sampled_mean_and_variance_and_vanish_on_untouched_coordinates():
    q, clip = 0.3, 0.5
    thetas = np.stack([MODEL.initial(np.random.default_rng(s)).numpy() for s in range(3)])
    directions = np.eye(MODEL.size)[[USED, UNUSED]]
    mean, variance = data_gradient_moments(thetas, directions, model=MODEL, data=DATA, clip_norm=clip, sample_rate=q)
    grads = [MODEL.per_example_gradients(MODEL.tensor(t), MODEL.tensor(DATA.x), torch.as_tensor(DATA.y)) for t in thetas]
    clipped = [(g * torch.clamp(clip / torch.linalg.vector_norm(g, dim=1, keepdim=True), max=1.0)).double().numpy()
               for g in grads]
    assert mean[:, 0] == pytest.approx([q * c[:, USED].sum() for c in clipped])
    assert variance[:, 0] == pytest.approx([q * (1 - q) * (c[:, USED] ** 2).sum() for c in clipped])
    assert np.all(mean[:, 1] == 0) and np.all(variance[:, 1] == 0)
    untouched = data_gradient_moments(thetas, directions[1:], model=MODEL, data=DATA, clip_norm=clip, sample_rate=q)
    assert all(np.all(part == 0) and part.shape == (3, 1) for part in untouched)


@pytest.mark.parametrize("coordinate", [USED, UNUSED])
def test_runs_scored_together_get_the_scores_each_gets_alone(coordinate):
    sigma, clip, steps, lr = 1.5, 0.5, 6, 2.0
    config = DPSGDConfig(model="logreg", noise_multiplier=sigma, clip_norm=clip, sample_rate=0.5, steps=steps,
                         learning_rate=lr)
    runs = []
    for seed in range(3):
        thetas, _ = _full_batch_run(np.random.default_rng(0), sigma=sigma, clip=clip, steps=steps, lr=lr)
        noise = np.random.default_rng(seed + 1).normal(0.0, 0.01, thetas.shape)
        runs.append(thetas + np.concatenate([np.zeros((1, MODEL.size)), noise[1:]]))
    kwargs = dict(model=MODEL, config=config, sample_rate=0.5, sum_scale=DATA.rows / lr, data=DATA)
    together = white_box_scores(np.stack(runs), _dirac(coordinate), **kwargs)
    assert together.shape == (3, 1)
    assert np.array_equal(together, np.stack([white_box_scores(run, _dirac(coordinate), **kwargs) for run in runs]))
