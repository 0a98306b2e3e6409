"""Mechanisms and training loops whose release does not depend on their input (true ε = 0), and one correct DP-SGD loop.

Every function here draws its release from its random stream alone, in
the output kind its name says, so no neighbouring pair can be told apart:
any certified ε > 0 on them is a false positive of dpaudit, at rate at
most 1 − confidence, and a certified ε above a claim of 0.5 is a bug. They
are importable as `oracle_blind:NAME` (the CLI, and `external_python`
with this folder on its path).
"""

from __future__ import annotations

import numpy as np

WIDTH = 3
"""The width of vector outputs, and of the vector records the oracle declares."""
CATEGORIES = 4
"""The categories of category records, and the length of a histogram-like output."""
FEATURES, CLASSES, ROWS = 6, 3, 24
"""The shape of the synthetic data of the DP-SGD loops."""
PARAMETERS = FEATURES * CLASSES + CLASSES


def number(data, rng, size):
    """A number: Laplace noise."""
    return rng.laplace(0.0, 1.0, size)


def float32(data, rng, size):
    """A float32 number, sometimes ±inf or NaN."""
    out = rng.laplace(0.0, 1.0, size).astype(np.float32)
    out[rng.random(size) < 0.01] = np.inf
    out[rng.random(size) < 0.01] = -np.inf
    out[rng.random(size) < 0.01] = np.nan
    return out


TABLE_ROWS = 6
"""The rows of a blind synthetic table (WIDTH columns of codes 0 .. 2)."""
TABLE_TARGET = (1,) * WIDTH
"""The target whose features a table release is made into (`dpaudit.mechanisms.table_features.tabulate`)."""


def table(data, rng, size):
    """A synthetic table: TABLE_ROWS rows of WIDTH codes in 0 .. 2, drawn at random (a generator that ignores its input)."""
    return rng.integers(0, 3, (size, TABLE_ROWS, WIDTH))


def integer(data, rng, size):
    """An integer: a difference of geometric draws."""
    return rng.geometric(0.5, size) - rng.geometric(0.5, size)


def vector(data, rng, size):
    """A vector of WIDTH Gaussian numbers."""
    return rng.normal(0.0, 1.0, (size, WIDTH))


def histogram(data, rng, size):
    """A vector of CATEGORIES counts with Laplace noise around 1."""
    return 1.0 + rng.laplace(0.0, 1.0, (size, CATEGORIES))


def string(data, rng):
    """A category written as text (one output per call)."""
    return ["red", "green", "blue"][int(rng.integers(3))]


def string_many(data, rng, size):
    """`string`, `size` outputs a call (the external protocol's form)."""
    return [string(data, rng) for _ in range(size)]


def big_integer_many(data, rng, size):
    """`big_integer`, `size` outputs a call (the external protocol's form)."""
    return [big_integer(data, rng) for _ in range(size)]


def complex_number(data, rng, size):
    """A complex number."""
    return rng.normal(size=size) + 1j * rng.normal(size=size)


def big_integer(data, rng):
    """A Python integer beyond 2⁶³ (one output per call)."""
    return 2**70 + int(rng.integers(0, 2**40)) * 2**20


def marginals(data, rng, size):
    """d noisy statistics of a ±1 matrix, d its number of columns: noise alone."""
    return rng.normal(0.0, 1.0, (size, np.asarray(data).shape[1]))


def _logits(params, x):
    params = np.asarray(params, dtype=np.float64)
    return np.asarray(x, dtype=np.float64) @ params[:FEATURES * CLASSES].reshape(FEATURES, CLASSES) + params[FEATURES * CLASSES:]


def losses(params, x, y):
    """Per-example cross-entropy of the softmax model with the flat parameters."""
    z = _logits(params, x)
    z = z - z.max(axis=1, keepdims=True)
    return np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(y)), np.asarray(y)]


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Return ROWS synthetic rows in [0, 1]^FEATURES and their labels."""
    rng = np.random.default_rng(seed)
    return rng.random((ROWS, FEATURES)), rng.integers(0, CLASSES, ROWS)


SIGMA, CLIP, RATE, STEPS, LR = 2.0, 1.0, 0.5, 4, 0.5
"""The settings of the loops (the blind one states them too, so that the stated-settings score is played)."""


def blind_train(x, y, rng):
    """Every step's parameters of a walk of noise alone: the release ignores x and y (and any canary)."""
    steps = rng.normal(0.0, SIGMA * CLIP, (STEPS, PARAMETERS)) * LR / (RATE * ROWS)
    return np.vstack([np.zeros(PARAMETERS), -np.cumsum(steps, axis=0)])


def correct_train(x, y, rng):
    """Textbook DP-SGD: Poisson rate RATE, clip CLIP, noise SIGMA·CLIP, divided by a fixed batch RATE·ROWS.

    The normaliser is fixed, whatever rows (and canaries) the loop is given,
    so the claim is the PLD ε of STEPS Poisson-subsampled Gaussian steps.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y)
    theta, out = np.zeros(PARAMETERS), [np.zeros(PARAMETERS)]
    for _ in range(STEPS):
        rows = np.flatnonzero(rng.random(len(y)) < RATE)
        z = _logits(theta, x[rows])
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(len(rows)), y[rows]] -= 1.0
        g = np.concatenate([(x[rows][:, :, None] * p[:, None, :]).reshape(len(rows), -1), p], axis=1)
        g *= np.minimum(1.0, CLIP / np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-12))
        theta = theta - LR * (g.sum(axis=0) + rng.normal(0.0, SIGMA * CLIP, PARAMETERS)) / (RATE * ROWS)
        out.append(theta)
    return np.array(out)
