"""Training functions written as a user writes them with Opacus, each with the added line `optimizer = watch(optimizer)`.

`make_train(model, bug, **settings)` returns `train(x, y, rng)`, which
trains logistic regression or a small CNN on x (n, 64), the 8×8 digits in
[0, 1], with `PrivacyEngine().make_private` (Poisson sampling, batch size B
so q = 1/⌈n/B⌉, plain SGD) for a fixed number of steps, and returns the
final parameters flat. Each bug mirrors one of `dpaudit.mechanisms.dpsgd.bugs`
as a user's own code would have it; `claim_epsilon` is the ε the user claims.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import torch
from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
from dpaudit.mechanisms.dpsgd.config import ACCOUNTANT_RATE_FACTOR
from dpaudit.mechanisms.dpsgd.hook import watch
from opacus import PrivacyEngine
from opacus.optimizers import DPOptimizer

__all__ = ["BUGS", "claim_epsilon", "make_train"]


class NoClipping(DPOptimizer):
    """Sums the per-sample gradients as they are."""

    def clip_and_accumulate(self) -> None:
        for p, samples in zip(self.params, self.grad_samples):
            p.summed_grad = samples.sum(0)


class ClipBatchMean(DPOptimizer):
    """Clips the batch's mean gradient to C, then scales it back to a sum."""

    def clip_and_accumulate(self) -> None:
        means = [samples.sum(0) / self.expected_batch_size for samples in self.grad_samples]
        norm = torch.linalg.vector_norm(torch.stack([mean.norm() for mean in means]))
        factor = (self.max_grad_norm / (norm + 1e-6)).clamp(max=1.0) * self.expected_batch_size
        for p, mean in zip(self.params, means):
            p.summed_grad = mean * factor


class BiasUnclipped(DPOptimizer):
    """Clips by the norm of the weights' gradients only; the biases' gradients are summed unclipped."""

    def clip_and_accumulate(self) -> None:
        samples = self.grad_samples
        weights = [g.reshape(len(g), -1) for p, g in zip(self.params, samples) if p.dim() > 1]
        norms = torch.cat(weights, dim=1).norm(dim=1)
        factor = (self.max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
        for p, g in zip(self.params, samples):
            p.summed_grad = torch.einsum("i,i...", factor if p.dim() > 1 else torch.ones_like(factor), g)


class ClipBatchSum(DPOptimizer):
    """Clips the batch's summed gradient to C instead of each example's."""

    def clip_and_accumulate(self) -> None:
        sums = [samples.sum(0) for samples in self.grad_samples]
        norm = torch.linalg.vector_norm(torch.stack([total.norm() for total in sums]))
        factor = (self.max_grad_norm / (norm + 1e-6)).clamp(max=1.0)
        for p, total in zip(self.params, sums):
            p.summed_grad = total * factor


OPTIMIZERS = {"no-clipping": NoClipping, "clip-batch-mean": ClipBatchMean, "clip-batch-sum": ClipBatchSum,
              "bias-unclipped": BiasUnclipped}
BUGS = (*OPTIMIZERS, "noise-unscaled", "accountant-rate")


def make_train(model: str = "logreg", bug: str | None = None, *, noise_multiplier: float = 1.0, clip_norm: float = 1.0,
               batch_size: int | None = None, steps: int = 10, learning_rate: float = 2.0,
               grad_sample_mode: str = "hooks") -> Callable[..., np.ndarray]:
    """Return a user's `train(x, y, rng)`; batch_size None means all rows (q = 1)."""
    if bug is not None and bug not in BUGS:
        raise ValueError(f"bug must be one of {BUGS}; got {bug!r}.")
    sigma = noise_multiplier / clip_norm if bug == "noise-unscaled" else noise_multiplier

    def train(x: Any, y: Any, rng: Any) -> np.ndarray:
        seeds = [int(s) for s in np.random.default_rng(rng).integers(0, 2**63 - 1, size=3)]
        with torch.random.fork_rng():
            torch.manual_seed(seeds[0])
            module = _model(model)
        data = torch.utils.data.TensorDataset(torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y, dtype=torch.int64))
        loader = torch.utils.data.DataLoader(data, batch_size=batch_size or len(data), generator=torch.Generator().manual_seed(seeds[1]))
        noise = torch.Generator().manual_seed(seeds[2])
        module, optimizer, loader = PrivacyEngine().make_private(
            module=module, optimizer=torch.optim.SGD(module.parameters(), lr=learning_rate), data_loader=loader,
            noise_multiplier=sigma, max_grad_norm=clip_norm, poisson_sampling=True, noise_generator=noise,
            grad_sample_mode=grad_sample_mode,
        )
        if bug in OPTIMIZERS:
            optimizer = OPTIMIZERS[bug](optimizer.original_optimizer, noise_multiplier=sigma, max_grad_norm=clip_norm,
                                        expected_batch_size=optimizer.expected_batch_size, generator=noise)
        optimizer = watch(optimizer)
        for xb, yb in _batches(loader, steps):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(module(xb), yb).backward()
            optimizer.step()
        return torch.cat([p.detach().reshape(-1) for p in module.parameters()]).numpy()

    return train


def claim_epsilon(*, noise_multiplier: float, batch_size: int, rows: int, steps: int, delta: float = 1e-5,
                  bug: str | None = None) -> float:
    """Return the user's claimed ε by dp_accounting's PLD at Opacus' rate 1/⌈n/B⌉ ("accountant-rate": a tenth of it)."""
    rate = 1.0 / math.ceil(rows / batch_size)
    if bug == "accountant-rate":
        rate /= ACCOUNTANT_RATE_FACTOR
    return pld_epsilon(poisson_event(noise_multiplier, rate, steps), delta)


def _model(name: str) -> torch.nn.Module:
    """Return logistic regression on the 64 pixels, or a one-convolution CNN on the 8×8 image."""
    if name == "logreg":
        return torch.nn.Linear(64, 10)
    if name == "cnn":
        return torch.nn.Sequential(torch.nn.Unflatten(1, (1, 8, 8)), torch.nn.Conv2d(1, 4, 3), torch.nn.Tanh(),
                                   torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 10))
    raise ValueError(f"model must be 'logreg' or 'cnn'; got {name!r}.")


def _batches(loader: Any, steps: int):
    """Yield `steps` batches, going through the loader's epochs as often as needed."""
    while True:
        for batch in loader:
            if steps == 0:
                return
            steps -= 1
            yield batch
