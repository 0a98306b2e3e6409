"""Runs trained side by side are the per-run trainer's runs: same random numbers, same iterates up to rounding, every bug."""

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.canaries import make_canaries
from dpaudit.mechanisms.dpsgd.batched_trainer import MAX_GROUP, BatchedDPSGDTrainer
from dpaudit.mechanisms.dpsgd.config import BUGS, DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.trainer import Insertions

pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("one_torch_thread")

DIGITS = load_data("digits")
INCLUDED = np.array([[True, True], [False, False], [True, False], [False, True]])


def _trainer(**settings):
    return BatchedDPSGDTrainer(DPSGDConfig(**settings), DIGITS)


def _theta0(trainer):
    return trainer.model.initial(np.random.default_rng(0)).cpu().numpy()


def _both(trainer, insertions, seeds, keep_iterates=True):
    """Return the iterates of runs trained one at a time and side by side, (R, T + 1, P) each."""
    theta0 = _theta0(trainer)
    alone = np.stack([trainer.train(theta0, insert, np.random.default_rng(seed), keep_iterates=keep_iterates).iterates
                      for insert, seed in zip(insertions, seeds)])
    side = trainer.train_runs(theta0, insertions, [np.random.default_rng(seed) for seed in seeds], keep_iterates=keep_iterates)
    return alone, side


@pytest.mark.parametrize("model", ["logreg", "mlp"])
@pytest.mark.parametrize("bug", (None,) + BUGS)
def test_every_run_is_the_per_run_trainers_run_for_every_bug(bug, model):
    for rate in (0.3, 1.0):
        trainer = _trainer(model=model, bug=bug, sample_rate=rate, steps=3, clip_norm=0.5)
        for kind in ("dirac", "crafted"):
            canaries = make_canaries(kind, 2, model=trainer.model, data=DIGITS, theta0=_theta0(trainer), clip_norm=0.5,
                                     rng=np.random.default_rng(1), target="bias" if bug == "bias-unclipped" else "quiet")
            alone, side = _both(trainer, [canaries.insertions(row) for row in INCLUDED], seeds=range(4))
            assert side.shape == alone.shape == (4, 4, trainer.model.size)
            np.testing.assert_allclose(side, alone, rtol=0, atol=1e-5 * np.abs(alone).max())


def test_a_quiet_dirac_canarys_coordinate_is_bit_for_bit_the_per_run_trainers():
    for rate in (0.3, 1.0):
        trainer = _trainer(sample_rate=rate, steps=5, noise_multiplier=0.7)
        canaries = make_canaries("dirac", 2, model=trainer.model, data=DIGITS, theta0=_theta0(trainer), clip_norm=1.0,
                                 rng=np.random.default_rng(1))
        alone, side = _both(trainer, [canaries.insertions(row) for row in INCLUDED], seeds=range(10, 14))
        coordinates = np.flatnonzero(canaries.gradients.any(axis=0))
        assert np.array_equal(side[..., coordinates], alone[..., coordinates])


@pytest.mark.parametrize("batching", ["poisson", "shuffle"])
def test_a_run_does_not_depend_on_the_runs_beside_it(batching):
    trainer = _trainer(model="mlp", sample_rate=0.2, steps=8, batching=batching)
    theta0 = _theta0(trainer)
    canaries = make_canaries("mislabelled", 1, model=trainer.model, data=DIGITS, theta0=theta0, clip_norm=1.0,
                             rng=np.random.default_rng(2))
    insertions = [canaries.insertions(np.array([i % 2 == 0])) for i in range(6)]
    together = trainer.train_runs(theta0, insertions, [np.random.default_rng(i) for i in range(6)])
    apart = [trainer.train_runs(theta0, insertions[i:j], [np.random.default_rng(k) for k in range(i, j)])
             for i, j in ((4, 6), (0, 1), (1, 4))]
    np.testing.assert_allclose(np.concatenate([apart[1], apart[2], apart[0]]), together, rtol=0, atol=1e-6)


def test_only_the_final_parameters_unless_the_iterates_are_kept():
    trainer = _trainer(steps=4)
    alone, side = _both(trainer, [Insertions()] * 3, seeds=(5, 6, 7), keep_iterates=False)
    assert side.shape == (3, 1, trainer.model.size)
    np.testing.assert_allclose(side, alone, rtol=0, atol=1e-5 * np.abs(alone).max())


def test_groups_fit_the_memory_budget_and_shrink_with_what_a_run_keeps():
    small, large = _trainer(sample_rate=0.1, steps=10), _trainer(model="mlp", sample_rate=1.0, steps=100)
    assert small.group_size(keep_iterates=False) == MAX_GROUP
    assert 1 <= large.group_size(keep_iterates=True) < large.group_size(keep_iterates=False) <= MAX_GROUP
