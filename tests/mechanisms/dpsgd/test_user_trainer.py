"""A user's own training function as the target: black-box canary audits, its claim, one-sentence errors."""

import numpy as np
import pytest
from dpaudit.audit.audits.dpsgd import audit_dpsgd
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

RNG = np.random.default_rng(0)
X = np.hstack([RNG.uniform(0, 1, size=(200, 5)), np.zeros((200, 1))])  # feature 5 is unused: crafted canaries go there
Y = (X[:, 0] > 0.5).astype(int)


def _probs(w, x):
    z = x @ w.reshape(6, 2)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def _trainer(sigma, claim_epsilon):
    def train(x, y, rng):
        w = np.zeros(12)
        for _ in range(10):
            g = ((_probs(w, x) - np.eye(2)[y])[:, None, :] * x[:, :, None]).reshape(len(y), -1)
            g *= np.minimum(1.0, 1.0 / np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-12))
            w -= (g.sum(0) + rng.normal(0.0, sigma, 12)) / len(y)
        return w

    def losses(w, x, y):
        return -np.log(_probs(w, x)[np.arange(len(y)), y])

    return UserTrainer(train=train, losses=losses, x=X, y=Y, claim=Claim(claim_epsilon, 1e-5))


def test_a_user_training_function_whose_claim_is_too_small_is_flagged():
    result = audit_dpsgd(target=_trainer(sigma=0.1, claim_epsilon=1.0), canary="crafted", threat="black-box", runs=200)
    assert result.mechanism == "user_training" and result.upper_bound is None
    assert result.verdict == "violation" and result.lower_bound.epsilon > 1.0


def test_an_honest_claim_is_not_flagged_over_seeds():
    # σ = 10 over 10 full-batch steps is μ = √10/10-GDP: ε ≈ 1.2 at δ = 1e-5, so a claim of 2 is honest.
    trainer = _trainer(sigma=10.0, claim_epsilon=2.0)
    verdicts = {audit_dpsgd(target=trainer, canary="crafted", threat="black-box", runs=100, seed=s).verdict
                for s in range(5)}
    assert verdicts == {"consistent"}


def test_white_box_and_failing_functions_are_one_sentence():
    trainer = _trainer(sigma=1.0, claim_epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="needs every step's parameters, but train.x, y, rng. returned one vector"):
        audit_dpsgd(target=trainer, canary="crafted", threat="white-box", runs=20)

    def broken(x, y, rng):
        raise RuntimeError("out of memory")

    failing = UserTrainer(train=broken, losses=lambda w, x, y: np.zeros(len(y)), x=X, y=Y, claim=Claim(1.0))
    with pytest.raises(MechanismError, match="broken raised RuntimeError: out of memory"):
        audit_dpsgd(target=failing, canary="mislabelled", threat="black-box", runs=20)

    nan_losses = UserTrainer(train=trainer.train_fn, losses=lambda w, x, y: np.full(len(y), np.nan), x=X, y=Y, claim=Claim(1.0))
    with pytest.raises(MechanismError, match="must return 1 numbers, none of them NaN"):
        audit_dpsgd(target=nan_losses, canary="mislabelled", threat="black-box", runs=20)
