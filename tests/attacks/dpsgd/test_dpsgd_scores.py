"""White-box scores lose nothing against the ideal: on iterates built from known noisy sums they are the exact LR."""

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.canaries import DPSGDCanaries
from dpaudit.attacks.dpsgd.scores import black_box_scores, white_box_scores
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.flat_model import FlatModel
from scipy import stats

pytest.importorskip("torch")

MODEL = FlatModel("logreg", features=4, classes=2)


def _iterates(sums):
    return np.concatenate([np.zeros((1, MODEL.size)), -np.cumsum(sums, axis=0)])


def _simulate(rng, *, member, q, sigma, clip, steps):
    """Return noisy sums whose only signal is a Dirac canary on coordinate 0, sampled at rate q."""
    sampled = member & (rng.random(steps) < q)
    sums = rng.normal(0.0, sigma * clip, size=(steps, MODEL.size))
    sums[:, 0] += clip * sampled
    return sums


@pytest.mark.parametrize("q", [1.0, 0.2])
def test_the_white_box_score_is_the_summed_per_step_likelihood_ratio(q):
    sigma, clip, steps = 1.5, 2.0, 30
    config = DPSGDConfig(noise_multiplier=sigma, clip_norm=clip, sample_rate=q, steps=steps)
    gradients = np.zeros((1, MODEL.size), dtype=np.float32)
    gradients[0, 0] = 10 * clip
    canary = DPSGDCanaries("dirac", gradients=gradients)
    sums = _simulate(np.random.default_rng(0), member=True, q=q, sigma=sigma, clip=clip, steps=steps)
    score = white_box_scores(_iterates(sums), canary, model=MODEL, config=config, sample_rate=q, sum_scale=1.0)
    x, mu = sums[:, 0] / (sigma * clip), 1 / sigma
    assert score[0] == pytest.approx(np.sum(np.log(1 - q + q * np.exp(mu * x - mu**2 / 2))))


def test_full_batch_out_scores_are_exactly_gaussian():
    sigma, steps, runs = 2.0, 20, 2000
    config = DPSGDConfig(noise_multiplier=sigma, sample_rate=1.0, steps=steps)
    gradients = np.zeros((1, MODEL.size), dtype=np.float32)
    gradients[0, 0] = 10.0
    canary = DPSGDCanaries("dirac", gradients=gradients)
    rng = np.random.default_rng(1)
    scores = [white_box_scores(_iterates(_simulate(rng, member=False, q=1, sigma=sigma, clip=1, steps=steps)),
                               canary, model=MODEL, config=config, sample_rate=1.0, sum_scale=1.0)[0]
              for _ in range(runs)]
    mu2 = steps / sigma**2
    assert stats.kstest(scores, stats.norm(-mu2 / 2, np.sqrt(mu2)).cdf).pvalue > 0.001


def test_black_box_dirac_score_is_the_displacement_along_the_canary():
    gradients = np.zeros((2, MODEL.size), dtype=np.float32)
    gradients[0, 1], gradients[1, 3] = 5.0, 5.0
    final = np.zeros(MODEL.size)
    final[1], final[3] = -0.5, 0.25
    scores = black_box_scores(np.zeros(MODEL.size), final, DPSGDCanaries("dirac", gradients=gradients),
                              losses=MODEL.loss_values)
    assert scores == pytest.approx([0.5, -0.25])
