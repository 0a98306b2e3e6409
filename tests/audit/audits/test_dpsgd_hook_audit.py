"""White-box audits of a user's own Opacus loop through the hook: Dirac canaries before clipping, every iterate recorded."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from dpaudit.attacks.games import OneRun
from dpaudit.audit.audits.dpsgd import audit_dpsgd
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

pytest.importorskip("opacus")
sys.path.insert(0, str(Path(__file__).parents[2] / "mechanisms" / "dpsgd"))
loops = importlib.import_module("opacus_loops")

DIGITS = load_data("digits")
SIGMA, STEPS = 10.0, 10  # full batches (q = 1): a claim of ε = 1.199 at δ = 1e-5


def _target(model="logreg", bug=None, sigma=SIGMA, clip=1.0):
    train = loops.make_train(model, bug, noise_multiplier=sigma, clip_norm=clip, steps=STEPS, learning_rate=0.5)
    claim = loops.claim_epsilon(noise_multiplier=sigma, batch_size=DIGITS.rows, rows=DIGITS.rows, steps=STEPS, bug=bug)
    return UserTrainer(train=train, losses=lambda w, x, y: np.zeros(len(y)), x=DIGITS.x, y=DIGITS.y,
                       claim=Claim(claim, 1e-5), name=f"opacus_{model}_{bug or 'correct'}")


def test_an_opacus_loop_without_clipping_is_flagged_through_the_hook():
    result = audit_dpsgd(target=_target(bug="no-clipping"), canary="dirac", threat="white-box", runs=60, seed=0)
    assert result.verdict == "violation" and result.lower_bound.assumption is None


def test_the_correct_cnn_loop_is_consistent_and_its_canaries_go_where_the_data_is_quiet():
    result = audit_dpsgd(target=_target("cnn"), canary="dirac", threat="white-box", game=OneRun(20), seed=1)
    assert result.verdict == "consistent" and result.observations.scores.shape == (20,)


def test_a_loop_without_the_hook_cannot_take_dirac_canaries():
    def train(x, y, rng):
        return np.zeros(650)

    plain = UserTrainer(train=train, losses=lambda w, x, y: np.zeros(len(y)), x=DIGITS.x, y=DIGITS.y, claim=Claim(1.0))
    with pytest.raises(Exception, match="optimizer = watch"):
        audit_dpsgd(target=plain, canary="dirac", runs=10)


BUG_CASES = [  # (model, bug, σ, C, Dirac target, dataset): every wrong variant of dpaudit.mechanisms.dpsgd.bugs
    # an Opacus user could write; the clipping bugs on 20 rows, where no unclipped real gradient drowns the canary
    ("logreg", "no-clipping", SIGMA, 1.0, "quiet", 20),
    ("logreg", "noise-unscaled", SIGMA, 10.0, "quiet", "user"),
    ("logreg", "clip-batch-mean", SIGMA, 1.0, "quiet", "user"),
    ("logreg", "bias-unclipped", SIGMA, 1.0, "bias", 20),
    ("logreg", "accountant-rate", 2.0, 1.0, "quiet", "user"),
    ("cnn", "no-clipping", SIGMA, 1.0, "quiet", 20),
]


@pytest.mark.slow
@pytest.mark.parametrize(("model", "bug", "sigma", "clip", "where", "dataset"), BUG_CASES)
def test_every_wrong_variant_is_flagged_through_the_hook(model, bug, sigma, clip, where, dataset):
    result = audit_dpsgd(target=_target(model, bug, sigma, clip), canary="dirac", dirac_target=where,
                         threat="white-box", runs=200, dataset=dataset, seed=0)
    assert result.verdict == "violation" and result.lower_bound.assumption is None


@pytest.mark.slow
def test_the_correct_opacus_loop_is_not_flagged_over_20_seeds():
    verdicts = [audit_dpsgd(target=_target(), canary="dirac", threat="white-box", runs=100, seed=seed).verdict
                for seed in range(20)]
    # Flagged with probability ≤ 0.05 per seed if sound: 4 or more of 20 has probability < 0.016.
    assert verdicts.count("violation") <= 3
