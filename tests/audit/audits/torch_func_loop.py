"""A user's DP-SGD loop as users write it with `torch.func`: per-example gradients by `vmap(grad(loss))` at module level.

Logistic regression on FEATURES inputs; `STEPS` Poisson-sampled steps at
rate RATE, each example's gradient clipped to 1, noise N(0, σ²), the sum
divided by RATE·n. `train` releases every step's parameters (θ₀ first).
"""

import numpy as np
import torch
from torch.func import grad, vmap

FEATURES, CLASSES, STEPS, RATE, SIGMA = 6, 2, 5, 0.5, 1.0


def _loss(params, x, y):
    logits = x @ params[: FEATURES * CLASSES].reshape(FEATURES, CLASSES) + params[FEATURES * CLASSES:]
    return torch.nn.functional.cross_entropy(logits.unsqueeze(0), y.unsqueeze(0))


per_example = vmap(grad(_loss), in_dims=(None, 0, 0))


def train(x, y, rng):
    """Return every step's parameters, one row per step, θ₀ first."""
    x, y = torch.as_tensor(np.asarray(x), dtype=torch.float32), torch.as_tensor(np.asarray(y), dtype=torch.int64)
    generator = torch.Generator().manual_seed(int(rng.integers(2**62)))
    theta = torch.zeros(FEATURES * CLASSES + CLASSES)
    out = [theta]
    for _ in range(STEPS):
        rows = torch.rand(len(y), generator=generator) < RATE
        g = per_example(theta, x[rows], y[rows])
        g = g / torch.clamp(g.norm(dim=1, keepdim=True), min=1.0)
        theta = theta - 0.5 * (g.sum(0) + SIGMA * torch.randn(theta.shape, generator=generator)) / (RATE * len(y))
        out.append(theta)
    return torch.stack(out).numpy()


def losses(params, x, y):
    """Return the per-example losses."""
    p = torch.as_tensor(np.asarray(params), dtype=torch.float32)
    return vmap(_loss, in_dims=(None, 0, 0))(p, torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y)).numpy()
