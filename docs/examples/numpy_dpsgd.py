"""Your own DP-SGD loop, in numpy, audited white-box: logistic regression on the 8×8 digits.

`make_train(sigma=..., bug=...)` returns `train(x, y, rng)` releasing every
step's parameters (θ₀ first), or the final ones with `iterates=False`.
Parameters are the flat (64·10 weights, 10 biases) vector; the update is
θ ← θ − lr·(Σ clipped + N(0, σ²C²I))/(q·n), or over a fixed `batch`. Bugs: "noise-unscaled" (noise σ
instead of σ·C), "bias-unclipped" (biases left out of clipping),
"no-clipping", "double-rate" (rows sampled at 2q, accounted at q), "batch-sum" (the batch's summed
gradient clipped to C instead of each example's).

`target` (correct) and `noise_unscaled` (σ instead of σ·C at C = 10) are
ready to audit: σ = 2.1457, q = 0.1, 50 steps claim ε = 1.50 at δ = 1e-5.

    PYTHONPATH=docs/examples dpaudit dpsgd --target numpy_dpsgd:noise_unscaled --threat white-box --canary crafted --runs 1000
"""

from __future__ import annotations

import numpy as np

FEATURES, CLASSES = 64, 10
WEIGHTS = FEATURES * CLASSES
SIZE = WEIGHTS + CLASSES


def probabilities(params: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Return the softmax class probabilities of the rows of x."""
    params = np.asarray(params, dtype=np.float64)
    z = np.asarray(x, dtype=np.float64) @ params[:WEIGHTS].reshape(FEATURES, CLASSES) + params[WEIGHTS:]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def losses(params: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Return the per-example cross-entropy losses."""
    return -np.log(np.maximum(probabilities(params, x)[np.arange(len(y)), y], 1e-300))


def _clip(g: np.ndarray, clip: float) -> np.ndarray:
    return g * np.minimum(1.0, clip / np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-12))


def make_train(*, sigma: float, clip: float = 1.0, rate: float = 0.1, steps: int = 50, lr: float = 0.5,
               bug: str | None = None, iterates: bool = True, batch: float | None = None):
    """Return a user's DP-SGD training function with these settings (and `bug`); it divides by `batch`, else q·n."""
    def train(x, y, rng):
        x, n = np.asarray(x, dtype=np.float64), len(y)
        theta = np.zeros(SIZE)
        out = [theta]
        for _ in range(steps):
            rows = np.flatnonzero(rng.random(n) < (2 * rate if bug == "double-rate" else rate))
            p = probabilities(theta, x[rows])
            p[np.arange(len(rows)), y[rows]] -= 1.0
            g = np.concatenate([(x[rows][:, :, None] * p[:, None, :]).reshape(len(rows), WEIGHTS), p], axis=1)
            if bug == "bias-unclipped":
                g[:, :WEIGHTS] = _clip(g[:, :WEIGHTS], clip)
            elif bug == "batch-sum":
                g = _clip(g.sum(axis=0, keepdims=True), clip)
            elif bug != "no-clipping":
                g = _clip(g, clip)
            noise = rng.normal(0.0, sigma if bug == "noise-unscaled" else sigma * clip, SIZE)
            theta = theta - lr * (g.sum(axis=0) + noise) / (batch or rate * n)
            out.append(theta)
        return np.array(out) if iterates else theta
    return train


def _user_trainer(train):
    from dpaudit.mechanisms import Claim
    from dpaudit.mechanisms.dpsgd.accounting import poisson_event
    from dpaudit.mechanisms.dpsgd.data import load_data
    from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

    digits = load_data("digits")
    return UserTrainer(train=train, losses=losses, x=digits.x, y=digits.y, claim=Claim(1.5, 1e-5),
                       event=poisson_event(SIGMA, 0.1, 50))


SIGMA = 2.1457
target = _user_trainer(make_train(sigma=SIGMA))
noise_unscaled = _user_trainer(make_train(sigma=SIGMA, clip=10.0, bug="noise-unscaled"))
