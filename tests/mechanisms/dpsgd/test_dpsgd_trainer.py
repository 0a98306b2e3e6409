"""dpaudit's DP-SGD trainer: it learns, samples as claimed, clips, and each bug changes exactly what it says."""

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.canaries import DIRAC_SCALE, crafted_canaries, dirac_canaries, mislabelled_canaries
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.trainer import DPSGDTrainer, Insertions

pytest.importorskip("torch")

DIGITS = load_data("digits")


def _trainer(**settings):
    return DPSGDTrainer(DPSGDConfig(**settings), DIGITS)


def _theta0(trainer, seed=0):
    return trainer.model.initial(np.random.default_rng(seed)).cpu().numpy()


@pytest.mark.parametrize("model", ["logreg", "mlp"])
def test_training_with_little_noise_learns_the_digits(model):
    trainer = _trainer(model=model, noise_multiplier=0.05)
    final = trainer.train(_theta0(trainer), Insertions(), np.random.default_rng(1)).final
    logits = trainer.model.logits(trainer.model.tensor(final), trainer.model.tensor(DIGITS.x))
    assert (logits.argmax(1).numpy() == DIGITS.y).mean() > 0.85


def test_poisson_batches_have_binomial_sizes_and_shuffled_ones_cover_each_epoch():
    poisson = _trainer(sample_rate=0.1, steps=400)
    sizes = np.array([len(b) for b in poisson._batches(DIGITS.rows, np.random.default_rng(2))])
    mean, sd = 0.1 * DIGITS.rows, np.sqrt(DIGITS.rows * 0.1 * 0.9 / 400)
    assert abs(sizes.mean() - mean) < 4 * sd
    shuffled = _trainer(sample_rate=0.1, steps=18, batching="shuffle")
    batches = list(shuffled._batches(1800, np.random.default_rng(3)))
    assert {len(b) for b in batches} == {180}
    assert np.array_equal(np.sort(np.concatenate(batches[:10])), np.arange(1800))


def test_runs_repeat_exactly_under_the_same_generator_seed():
    trainer = _trainer(steps=5)
    theta0 = _theta0(trainer)
    a = trainer.train(theta0, Insertions(), np.random.default_rng(7), keep_iterates=True).iterates
    b = trainer.train(theta0, Insertions(), np.random.default_rng(7), keep_iterates=True).iterates
    assert a.shape == (6, trainer.model.size) and np.array_equal(a, b)


def _canary_step(bug, clip_norm=1.0, target="quiet"):
    """Return the displacement along a full-batch Dirac canary's coordinate after one nearly noiseless step."""
    trainer = _trainer(bug=bug, clip_norm=clip_norm, sample_rate=1.0, steps=1, noise_multiplier=1e-9)
    theta0 = _theta0(trainer)
    canary = dirac_canaries(1, model=trainer.model, data=DIGITS, theta0=theta0, clip_norm=clip_norm,
                            rng=np.random.default_rng(0), target=target)
    coordinate = np.flatnonzero(canary.gradients[0])[0]
    runs = [trainer.train(theta0, canary.insertions(np.array([inside])), np.random.default_rng(1)).final
            for inside in (True, False)]
    return (runs[1][coordinate] - runs[0][coordinate]) * trainer.sum_scale


def test_the_dirac_canary_is_clipped_to_c_by_the_correct_trainer_and_not_by_the_buggy_ones():
    assert _canary_step(None) == pytest.approx(1.0, rel=1e-3)
    assert _canary_step(None, clip_norm=3.0) == pytest.approx(3.0, rel=1e-3)
    assert _canary_step("no-clipping") == pytest.approx(DIRAC_SCALE, rel=1e-3)
    assert _canary_step("bias-unclipped", target="bias") == pytest.approx(DIRAC_SCALE, rel=1e-3)
    assert _canary_step("clip-batch-mean") == pytest.approx(DIRAC_SCALE, rel=1e-3)  # the mean is inside the ball


def test_noise_unscaled_adds_sigma_not_sigma_c():
    stds = []
    for bug in (None, "noise-unscaled"):
        trainer = _trainer(bug=bug, clip_norm=10.0, noise_multiplier=2.0, sample_rate=1.0, steps=1)
        theta0 = _theta0(trainer)
        updates = [trainer.train(theta0, Insertions(), np.random.default_rng(s)).final - theta0 for s in range(3)]
        stds.append(np.std(np.diff(updates, axis=0)) * trainer.sum_scale / np.sqrt(2))
    assert stds[0] == pytest.approx(20.0, rel=0.05) and stds[1] == pytest.approx(2.0, rel=0.05)


def test_canary_builders_and_their_one_sentence_errors():
    trainer = _trainer()
    theta0 = _theta0(trainer)
    rng = np.random.default_rng(0)
    quiet = dirac_canaries(30, model=trainer.model, data=DIGITS, theta0=theta0, clip_norm=1.0, rng=rng)
    pixel_weights = {row * 64 + pixel for row in range(10) for pixel in DIGITS.unused_features()}
    assert set(np.flatnonzero(quiet.gradients.any(axis=0))) == pixel_weights
    crafted = crafted_canaries(5, data=DIGITS, rng=rng)
    assert set(np.flatnonzero(crafted.x.any(axis=0))) <= set(DIGITS.unused_features())
    wrong = mislabelled_canaries(50, data=DIGITS, rng=rng)
    assert wrong.y.shape == (50,) and len(wrong.x) == 50
    with pytest.raises(InvalidParameterError, match="distinct quiet coordinates"):
        dirac_canaries(trainer.model.size + 1, model=trainer.model, data=DIGITS, theta0=theta0, clip_norm=1.0, rng=rng)
    with pytest.raises(InvalidParameterError, match="none"):
        crafted_canaries(1, data=load_data("synthetic"), rng=rng)


@pytest.mark.parametrize("settings, message", [
    ({"noise_multiplier": 0}, "noise_multiplier"),
    ({"sample_rate": 1.5}, "sample_rate"),
    ({"steps": 0}, "steps"),
    ({"model": "resnet"}, "model must be one of"),
    ({"bug": "typo"}, "bug must be one of"),
])
def test_bad_settings_are_one_sentence(settings, message):
    with pytest.raises(InvalidParameterError, match=message):
        DPSGDConfig(**settings)
