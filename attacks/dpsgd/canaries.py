"""Canaries for DP-SGD audits: gradient-space Dirac canaries, crafted inputs and mislabelled examples.

- "dirac": a per-example gradient that is zero except in one parameter
  coordinate (Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini and
  Terzis, "Tight auditing of differentially private machine learning",
  USENIX Security 2023), of norm `scale`·C so that code which skips
  clipping shows it. By default the coordinates are those the real data's
  gradients touch least at θ₀ (for logistic regression on the digits: the
  weights of the three pixels that are always 0, which no real example
  touches); `target="bias"` puts them on bias coordinates instead.
- "crafted": an input that is zero except in a feature no real example
  uses, so its gradient falls in weights no real example touches; it works
  with any trainer (Opacus unchanged).
- "mislabelled": a real example with a wrong label (Jagielski, Ullman and
  Oprea, "Auditing differentially private machine learning", NeurIPS 2020).

Each canary, when included, is sampled like a real example (rate q under
Poisson sampling), never added to every step.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.dpsgd.data import TrainingData
from dpaudit.mechanisms.dpsgd.flat_model import FlatModel
from dpaudit.mechanisms.dpsgd.trainer import Insertions

__all__ = [
    "AUTO",
    "CANARY_CHOICES",
    "CANARY_KINDS",
    "DIRAC_SCALE",
    "DIRAC_TARGETS",
    "DPSGDCanaries",
    "crafted_canaries",
    "dirac_canaries",
    "diracs_on",
    "make_canaries",
    "mislabelled_canaries",
]

DIRAC, CRAFTED, MISLABELLED = "dirac", "crafted", "mislabelled"
CANARY_KINDS = (DIRAC, CRAFTED, MISLABELLED)
AUTO = "auto"  # the audit chooses (canary kind, dataset)
CANARY_CHOICES = (AUTO, *CANARY_KINDS)
QUIET, BIAS = "quiet", "bias"
DIRAC_TARGETS = (QUIET, BIAS)
DIRAC_SCALE = 10.0


@dataclasses.dataclass(frozen=True)
class DPSGDCanaries:
    """m canaries of one kind: input rows (x, y) or raw gradients (m, P).

    `magnitudes`: a crafted canary's value in its feature, when chosen to
    reach the clip norm; `support`: the parameter coordinates the input
    canaries' gradients touch (for scores computed from a user's losses);
    `background`: raw gradients (r, P) that every run holds besides the
    canaries, in or out (an adversarial dataset in gradient space).
    """

    kind: str
    x: np.ndarray | None = None
    y: np.ndarray | None = None
    gradients: np.ndarray | None = None
    magnitudes: np.ndarray | None = None
    support: np.ndarray | None = None
    background: np.ndarray | None = None

    @property
    def size(self) -> int:
        """m, the number of canaries."""
        return len(self.gradients) if self.gradients is not None else len(self.y)

    def only(self, index: int) -> DPSGDCanaries:
        """Return canary `index` alone (its support: the coordinates all of them touch)."""
        pick = slice(index, index + 1)
        return dataclasses.replace(
            self, x=None if self.x is None else self.x[pick], y=None if self.y is None else self.y[pick],
            gradients=None if self.gradients is None else self.gradients[pick],
            magnitudes=None if self.magnitudes is None else self.magnitudes[pick])

    def insertions(self, included: np.ndarray) -> Insertions:
        """Return the canaries marked in the boolean mask `included`, and the background, ready to put into a training run."""
        included = np.asarray(included, dtype=bool)
        if self.gradients is not None:
            chosen = self.gradients[included]
            return Insertions(gradients=chosen if self.background is None else np.concatenate([chosen, self.background]))
        return Insertions(x=self.x[included], y=self.y[included])


def make_canaries(kind: str, m: int, *, model: FlatModel, data: TrainingData, theta0: np.ndarray,
                  clip_norm: float, rng: np.random.Generator, target: str = QUIET) -> DPSGDCanaries:
    """Return m canaries of `kind` ("dirac", "crafted" or "mislabelled") for `model` trained on `data`."""
    if kind == DIRAC:
        return dirac_canaries(m, model=model, data=data, theta0=theta0, clip_norm=clip_norm, rng=rng, target=target)
    if kind == CRAFTED:
        return crafted_canaries(m, data=data, rng=rng)
    if kind == MISLABELLED:
        return mislabelled_canaries(m, data=data, rng=rng)
    raise InvalidParameterError(f"The canary kind must be one of {', '.join(CANARY_KINDS)}; got {kind!r} instead.")


def dirac_canaries(m: int, *, model: FlatModel, data: TrainingData, theta0: np.ndarray, clip_norm: float,
                   rng: np.random.Generator, target: str = QUIET) -> DPSGDCanaries:
    """Return m Dirac gradients of norm DIRAC_SCALE·C on distinct coordinates of `model` (quietest at θ₀, or biases)."""
    activity = _activity(model, data, theta0) if target == QUIET else None
    return diracs_on(m, bias_mask=model.bias_mask, activity=activity, clip_norm=clip_norm, rng=rng, target=target)


def diracs_on(m: int, *, bias_mask: np.ndarray, activity: np.ndarray | None, clip_norm: float,
              rng: np.random.Generator, target: str = QUIET) -> DPSGDCanaries:
    """Return m Dirac gradients of norm DIRAC_SCALE·C on distinct coordinates of a model of len(bias_mask) parameters.

    "quiet": the coordinates of least `activity` (the real data's total
    absolute gradient, per coordinate), ties in random order; "bias":
    random coordinates where `bias_mask` is True.
    """
    if target not in DIRAC_TARGETS:
        raise InvalidParameterError(f"The Dirac target must be one of {', '.join(DIRAC_TARGETS)}; got {target!r} instead.")
    size = len(bias_mask)
    candidates = np.flatnonzero(bias_mask) if target == BIAS else np.lexsort((rng.random(size), activity))
    if m > len(candidates):
        raise InvalidParameterError(
            f"{m} Dirac canaries need {m} distinct {target} coordinates, but the model has {len(candidates)}; "
            "use fewer canaries, a larger model, or crafted/mislabelled canaries."
        )
    coordinates = candidates[:m] if target == QUIET else rng.choice(candidates, size=m, replace=False)
    gradients = np.zeros((m, size), dtype=np.float32)
    gradients[np.arange(m), coordinates] = DIRAC_SCALE * clip_norm
    return DPSGDCanaries(DIRAC, gradients=gradients)


def _activity(model: FlatModel, data: TrainingData, theta0: np.ndarray) -> np.ndarray:
    """Return the real data's total absolute gradient at θ₀, per coordinate."""
    grads = model.per_example_gradients(model.tensor(theta0), model.tensor(data.x), model.torch.as_tensor(data.y))
    return grads.abs().sum(dim=0).cpu().numpy()


def crafted_canaries(m: int, *, data: TrainingData, rng: np.random.Generator) -> DPSGDCanaries:
    """Return m inputs that are 1 in one feature no real example uses (cycling over them) and 0 elsewhere."""
    unused = data.unused_features()
    if len(unused) == 0:
        raise InvalidParameterError(
            f"Crafted canaries need a feature that is zero in every example, and the '{data.name}' data has none; "
            "use dirac or mislabelled canaries."
        )
    x = np.zeros((m, data.features), dtype=np.float32)
    x[np.arange(m), unused[np.arange(m) % len(unused)]] = 1.0
    return DPSGDCanaries(CRAFTED, x=x, y=rng.integers(0, data.classes, size=m))


def mislabelled_canaries(m: int, *, data: TrainingData, rng: np.random.Generator) -> DPSGDCanaries:
    """Return m real examples (drawn without replacement when possible) each with a different, wrong label."""
    rows = rng.choice(data.rows, size=m, replace=m > data.rows)
    wrong = (data.y[rows] + rng.integers(1, data.classes, size=m)) % data.classes
    return DPSGDCanaries(MISLABELLED, x=data.x[rows], y=wrong)
