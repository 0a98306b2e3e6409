"""A torch model seen as one flat parameter vector θ, with per-example gradients by `torch.func`.

`functional_call` evaluates the module at any θ; `vmap(grad(loss))` gives the
per-example gradients of a batch in one call (the construction of Opacus'
functorch path and of the torch.func tutorial on per-sample gradients).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from dpaudit.mechanisms.dpsgd.models import make_model
from dpaudit.mechanisms.dpsgd.torch_support import default_device, import_torch

__all__ = ["FlatModel"]


class FlatModel:
    """A module's parameters as a flat float32 vector of length `size`, on `device`."""

    def __init__(self, name: str, *, features: int, classes: int, device: Any = None) -> None:
        self.torch = import_torch()
        self.device = device or default_device()
        self.module = make_model(name, features=features, classes=classes).to(self.device)
        named = list(self.module.named_parameters())
        self.names = [n for n, _ in named]
        self.shapes = [tuple(p.shape) for _, p in named]
        self.sizes = [math.prod(shape) for shape in self.shapes]
        self.size = sum(self.sizes)
        self.bias_mask = np.concatenate([np.full(k, n.endswith("bias")) for n, k in zip(self.names, self.sizes)])
        func = self.torch.func
        self._per_example = func.vmap(func.grad(self._example_loss), in_dims=(None, 0, 0))

    def initial(self, rng: np.random.Generator) -> Any:
        """Return θ₀ drawn as torch's default init does (uniform ±1/√fan_in), from `rng`."""
        fan_ins = _fan_ins(self.shapes)
        parts = [rng.uniform(-1.0, 1.0, size) / math.sqrt(fan_in) for size, fan_in in zip(self.sizes, fan_ins)]
        return self.tensor(np.concatenate(parts))

    def tensor(self, values: Any) -> Any:
        """Return `values` as a float32 tensor on the model's device."""
        return self.torch.as_tensor(np.asarray(values, dtype=np.float32), device=self.device)

    def params(self, theta: Any) -> dict[str, Any]:
        """Return θ as the module's named parameters (views, no copy)."""
        chunks = self.torch.split(theta, self.sizes)
        return {name: chunk.view(shape) for name, chunk, shape in zip(self.names, chunks, self.shapes)}

    def logits(self, theta: Any, x: Any) -> Any:
        """Return the model's logits at θ on a batch x."""
        return self.torch.func.functional_call(self.module, self.params(theta), (x,))

    def losses(self, theta: Any, x: Any, y: Any) -> Any:
        """Return the per-example cross-entropy losses at θ."""
        return self.torch.nn.functional.cross_entropy(self.logits(theta, x), y, reduction="none")

    def loss_values(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Return the per-example losses at θ of numpy inputs, as float64 numpy."""
        with self.torch.no_grad():
            losses = self.losses(self.tensor(theta), self.tensor(x), self.torch.as_tensor(y, device=self.device))
        return losses.cpu().numpy().astype(np.float64)

    def per_example_gradients(self, theta: Any, x: Any, y: Any) -> Any:
        """Return the (batch, size) matrix of per-example loss gradients at θ."""
        if len(y) == 0:
            return self.torch.zeros((0, self.size), device=self.device)
        return self._per_example(theta, x, y)

    def _example_loss(self, theta: Any, x: Any, y: Any) -> Any:
        return self.torch.nn.functional.cross_entropy(self.logits(theta, x.unsqueeze(0)), y.unsqueeze(0))


def _fan_ins(shapes: list[tuple[int, ...]]) -> list[int]:
    """Return each parameter's fan-in: a weight's input width, a bias takes the weight before it."""
    fan_ins: list[int] = []
    for shape in shapes:
        fan_ins.append(shape[1] if len(shape) > 1 else fan_ins[-1])
    return fan_ins
