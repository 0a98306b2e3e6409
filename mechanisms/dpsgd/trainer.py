"""DP-SGD (Abadi et al. 2016) with per-example clipping by `torch.func`, and its audited bugs.

Each step samples a batch (Poisson at rate q, or the next shuffled
fixed-size batch), clips every example's gradient to norm C, sums, adds
N(0, σ²C²I) and steps by lr/(q·n) times that sum. Canaries enter as the
training data do: input-space canaries are extra rows of the data, sampled
like any row; gradient-space canaries are extra per-example gradients
(Nasr et al. 2023's Dirac canaries), sampled and clipped like any example.
The run releases its final parameters, or every iterate θ₀ … θ_T (the
white-box, all-iterates threat model).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from dpaudit.mechanisms.dpsgd.accounting import batch_size
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import TrainingData
from dpaudit.mechanisms.dpsgd.flat_model import FlatModel
from dpaudit.mechanisms.dpsgd.step_settings import StepSettings

__all__ = ["DPSGDTrainer", "Insertions", "Trajectory"]


@dataclasses.dataclass(frozen=True)
class Insertions:
    """Canaries put into one training run: extra rows (x, y) and extra raw per-example gradients."""

    x: np.ndarray | None = None
    y: np.ndarray | None = None
    gradients: np.ndarray | None = None

    @property
    def rows(self) -> int:
        """The number of inserted input-space examples."""
        return 0 if self.y is None else len(self.y)

    @property
    def gradient_count(self) -> int:
        """The number of inserted gradient-space examples."""
        return 0 if self.gradients is None else len(self.gradients)


@dataclasses.dataclass(frozen=True)
class Trajectory:
    """What a run releases: the iterates θ₀ … θ_T (only the last when `keep_iterates` was False), as numpy.

    A user's training function also tells how many rows of data the audit
    gave it besides the canaries (a number fixed before the game) and, when
    stated or read from its optimizer, the settings of its steps.
    """

    iterates: np.ndarray
    rows: int | None = None
    settings: StepSettings | None = None

    @property
    def final(self) -> np.ndarray:
        """θ_T, the trained parameters."""
        return self.iterates[-1]


class DPSGDTrainer:
    """Trains `config.model` on `data` with DP-SGD as `config` says (bugs included) on CUDA or the CPU."""

    def __init__(self, config: DPSGDConfig, data: TrainingData, *, device: Any = None) -> None:
        self.config = config
        self.data = data
        self.model = FlatModel(config.model, features=data.features, classes=data.classes, device=device)
        self.torch = self.model.torch
        self.expected_batch = config.sample_rate * data.rows
        self.sample_rate = config.sample_rate
        self.sum_scale = self.expected_batch / config.learning_rate

    def train(self, theta0: np.ndarray, insert: Insertions, rng: np.random.Generator, *,
              keep_iterates: bool = False) -> Trajectory:
        """Return the run's trajectory from θ₀ with `insert` in the data, its randomness drawn from `rng`."""
        x, y = self._training_set(insert)
        pool = len(y) + insert.gradient_count
        theta = self.model.tensor(theta0)
        iterates = [theta0] if keep_iterates else []
        for batch in self._batches(pool, rng):
            rows = batch[batch < len(y)]
            grads = self.model.per_example_gradients(theta, x[rows], y[rows])
            if insert.gradient_count:
                extra = batch[batch >= len(y)] - len(y)
                grads = self.torch.cat([grads, self.model.tensor(insert.gradients[extra])])
            noisy = self._aggregate(grads) + self.model.tensor(rng.normal(0.0, self._noise_std(), self.model.size))
            theta = theta - self.config.learning_rate / self.expected_batch * noisy
            if keep_iterates:
                iterates.append(theta.cpu().numpy())
        if not keep_iterates:
            iterates.append(theta.cpu().numpy())
        return Trajectory(np.stack(iterates))

    def losses(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Return the per-example losses of (x, y) under parameters θ."""
        return self.model.loss_values(theta, x, y)

    def _training_set(self, insert: Insertions) -> tuple[Any, Any]:
        x, y = self.data.x, self.data.y
        if insert.rows:
            x = np.concatenate([x, np.asarray(insert.x, dtype=np.float32)])
            y = np.concatenate([y, np.asarray(insert.y, dtype=np.int64)])
        return self.model.tensor(x), self.torch.as_tensor(y, device=self.model.device)

    def _batches(self, pool: int, rng: np.random.Generator):
        """Yield each step's example indices: Poisson at rate q, or consecutive slices of fresh shuffles."""
        if not self.config.shuffled:
            for _ in range(self.config.steps):
                yield np.flatnonzero(rng.random(pool) < self.config.sample_rate)
            return
        size = batch_size(self.config, self.data.rows)
        order, start = rng.permutation(pool), 0
        for _ in range(self.config.steps):
            if start + size > pool:
                order, start = rng.permutation(pool), 0
            yield order[start:start + size]
            start += size

    def _aggregate(self, grads: Any) -> Any:
        """Return the clipped gradient sum, as the config's code computes it."""
        return self._batch_term(self._example_terms(grads).sum(dim=0))

    def _example_terms(self, grads: Any) -> Any:
        """Return each example's term of the sum (rows of `grads`): clipped to C, or not, as the config's code clips."""
        c, bug = self.config.clip_norm, self.config.bug
        if bug in ("no-clipping", "clip-batch-mean"):
            return grads
        if bug == "bias-unclipped":
            bias = self.torch.as_tensor(self.model.bias_mask, device=self.model.device)
            return _clip_rows(self.torch, grads * ~bias, c) + grads * bias
        return _clip_rows(self.torch, grads, c)

    def _batch_term(self, sums: Any) -> Any:
        """Return the step's gradient from the sum of example terms (last axis): itself, or its mean clipped and scaled back."""
        if self.config.bug != "clip-batch-mean":
            return sums
        return _clip_rows(self.torch, sums / self.expected_batch, self.config.clip_norm) * self.expected_batch

    def _noise_std(self) -> float:
        sigma = self.config.noise_multiplier
        return sigma if self.config.bug == "noise-unscaled" else sigma * self.config.clip_norm


def _clip_rows(torch: Any, rows: Any, clip_norm: float) -> Any:
    """Return each row (last axis) scaled to norm at most `clip_norm` (rows of norm 0 stay 0)."""
    return rows * clip_factors(torch, torch.linalg.vector_norm(rows, dim=-1, keepdim=True), clip_norm)


def clip_factors(torch: Any, norms: Any, clip_norm: float) -> Any:
    """Return min(1, C/‖g‖) for gradient norms ‖g‖ (1 where ‖g‖ = 0): the factor that clips a gradient to norm C."""
    return torch.clamp(clip_norm / torch.clamp(norms, min=1e-12), max=1.0)
