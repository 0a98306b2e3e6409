"""Training data that ships with the dependencies: scikit-learn's digits and a seeded synthetic table.

Nothing is downloaded. Features are scaled to [0, 1]; the digits keep their
three pixels that are zero in every image (0, 32 and 39), the coordinates a
crafted canary can use without any real example touching them.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from dpaudit.errors import InvalidParameterError

__all__ = ["DATASETS", "TrainingData", "load_data"]

DIGITS, SYNTHETIC = "digits", "synthetic"
DATASETS = (DIGITS, SYNTHETIC)
SYNTHETIC_SHAPE = (2000, 32, 4)  # rows, features, classes


@dataclasses.dataclass(frozen=True)
class TrainingData:
    """Features `x` (n, f) in [0, 1] as float32 and integer labels `y` (n,) in [0, classes)."""

    name: str
    x: np.ndarray
    y: np.ndarray
    classes: int

    @property
    def rows(self) -> int:
        """n, the number of training examples."""
        return len(self.y)

    @property
    def features(self) -> int:
        """f, the number of input features."""
        return self.x.shape[1]

    def unused_features(self) -> np.ndarray:
        """Return the features that are zero in every example (their weights get no gradient from real data)."""
        return np.flatnonzero(np.all(self.x == 0.0, axis=0))


def load_data(name: str, *, seed: int = 0) -> TrainingData:
    """Return the named training set ("digits": 1797 8×8 images, 10 classes; "synthetic": a seeded Gaussian mixture)."""
    if name == DIGITS:
        from sklearn.datasets import load_digits

        x, y = load_digits(return_X_y=True)
        return TrainingData(DIGITS, (x / 16.0).astype(np.float32), y.astype(np.int64), 10)
    if name == SYNTHETIC:
        return _synthetic(np.random.default_rng(seed))
    raise InvalidParameterError(f"The training data must be one of {', '.join(DATASETS)}; got {name!r} instead.")


def _synthetic(rng: np.random.Generator) -> TrainingData:
    rows, features, classes = SYNTHETIC_SHAPE
    centres = rng.uniform(0.2, 0.8, size=(classes, features))
    y = rng.integers(0, classes, size=rows)
    x = np.clip(centres[y] + rng.normal(0.0, 0.15, size=(rows, features)), 0.0, 1.0)
    return TrainingData(SYNTHETIC, x.astype(np.float32), y.astype(np.int64), classes)
