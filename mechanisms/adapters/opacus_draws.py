"""Opacus' random draws routed through a replay's generator: the one interception point of an Opacus replay.

Opacus 1.6 draws twice per step, each in one named place: its Gaussian
noise in `opacus.optimizers.optimizer._generate_noise(std, reference,
generator, secure_mode)`, whose `reference` is the clipped gradient sum the
noise is added to, and the Poisson sample in
`UniformWithReplacementSampler.__iter__` (`opacus/utils/uniform_sampler.py`),
`torch.rand(num_samples, generator=...) < sample_rate`. `drawing_from(rng)`
points both, for a block, at a `numpy.random.Generator`: the noise is
`rng.normal(loc=reference, scale=std)` minus the reference (so a replay
sees the value the noise is added to as the draw's location, and its
move as the move of a noise argument, priced by the Gaussian's σ), and the
uniforms are `rng.random(num_samples)`; the rest is Opacus' own code
(clipping, the division by the expected batch size, the sampling rate, the
number of steps), so what the replay compares is what Opacus computes.
A draw of another kind (`secure_mode`'s five normals a coordinate) is
refused in one sentence; any other draw from the generators Opacus is
handed goes around this point, which a replay sees (`opacus.py` hands
generators seeded from the system's entropy then).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np
from dpaudit.errors import InvalidParameterError

__all__ = ["drawing_from"]


class _TorchDrawingFrom:
    """torch as `opacus.utils.uniform_sampler` sees it in the block: `rand` drawn from the rng, the rest torch's own."""

    def __init__(self, torch: Any, rng: np.random.Generator) -> None:
        self._torch, self._rng = torch, rng

    def rand(self, *size: int, generator: Any = None, **kwargs: Any) -> Any:
        """Return uniforms on [0, 1) of `size` drawn by `rng.random` (float64: the same law as torch's)."""
        return self._torch.as_tensor(self._rng.random(size=tuple(int(s) for s in size)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._torch, name)


def _noise(torch: Any, rng: np.random.Generator) -> Any:
    """Return Opacus' `_generate_noise` drawn from `rng`: N(reference, std²) minus the reference, of its dtype."""

    def generate_noise(std: float, reference: Any, generator: Any = None, secure_mode: bool = False) -> Any:
        if secure_mode:
            raise InvalidParameterError("A replay of Opacus records its plain noise only; secure_mode draws five "
                                        "normals a coordinate, which it does not replay.")
        if std == 0:
            return torch.zeros(reference.shape, device=reference.device, dtype=reference.dtype)
        value = reference.detach().cpu().numpy().astype(np.float64)
        drawn = rng.normal(loc=value, scale=float(std))
        return torch.as_tensor(np.subtract(drawn, value), dtype=reference.dtype, device=reference.device)

    return generate_noise


@contextlib.contextmanager
def drawing_from(rng: np.random.Generator) -> Iterator[None]:
    """Route, for the block, Opacus' noise (`_generate_noise`) and Poisson uniforms (`torch.rand`) to `rng`."""
    import opacus.optimizers.optimizer as optimizer
    import opacus.utils.uniform_sampler as sampler
    import torch

    saved = (optimizer._generate_noise, sampler.torch)
    optimizer._generate_noise = _noise(torch, rng)
    sampler.torch = _TorchDrawingFrom(torch, rng)
    try:
        yield
    finally:
        optimizer._generate_noise, sampler.torch = saved
