"""Opacus as an audit target: the same model trained with `opacus.PrivacyEngine.make_private`, Poisson sampling on.

The training loop is the one Opacus' tutorials show: a `DataLoader` of batch
size round(q·n) over the data (and any inserted canary rows), `make_private`
with the noise multiplier and clipping norm, plain SGD. Opacus' sampling
rate is 1/len(data_loader) (so q = 256/1797 becomes 1/8) and its claim
comes from its own accountant (PRV by default), for that rate.
Gradient-space canaries cannot enter Opacus unchanged; crafted and
mislabelled canaries can. Not flagged over seeds by
`dpaudit dpsgd --target opacus --canary crafted --threat white-box --sample-rate 1 --steps 10 --noise-multiplier 10 --runs 100`
(Opacus' claim ε = 1.209, dpaudit's PLD bound 1.199).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import TrainingData
from dpaudit.mechanisms.dpsgd.flat_model import FlatModel
from dpaudit.mechanisms.dpsgd.models import make_model
from dpaudit.mechanisms.dpsgd.torch_support import import_optional
from dpaudit.mechanisms.dpsgd.trainer import Insertions, Trajectory

__all__ = ["OpacusTrainer", "opacus_epsilon", "opacus_rate"]

OPACUS_HINT = "pip install torch==2.13.0 && pip install 'dpaudit[opacus]'"


def _import_opacus() -> Any:
    """Return the opacus module, or raise a one-sentence error saying how to install it."""
    return import_optional("opacus", needed_by="Audits of Opacus", hint=OPACUS_HINT)


def opacus_rate(config: DPSGDConfig, rows: int) -> float:
    """Return the sampling rate Opacus uses, 1/len(data_loader) for batches of round(q·n)."""
    return 1.0 / math.ceil(rows / max(1, round(config.sample_rate * rows)))


def opacus_epsilon(config: DPSGDConfig, rows: int, *, accountant: str = "prv") -> float:
    """Return Opacus' own ε at the config's δ for T steps at its sampling rate ("prv" or "rdp" accountant)."""
    accountants = _import_opacus().accountants
    kind = {"prv": accountants.PRVAccountant, "rdp": accountants.RDPAccountant}[accountant]()
    kind.history = [(config.noise_multiplier, opacus_rate(config, rows), config.steps)]
    with np.errstate(divide="ignore"):  # the PRV accountant takes log 0 at q = 1 and handles it
        return float(kind.get_epsilon(config.delta))


class OpacusTrainer:
    """Trains `config.model` on `data` with Opacus; exposes the same `train` as `DPSGDTrainer`."""

    def __init__(self, config: DPSGDConfig, data: TrainingData, *, device: Any = None) -> None:
        if config.bug is not None or config.shuffled:
            raise InvalidParameterError("The Opacus target trains as Opacus does: Poisson sampling and no bug options.")
        _import_opacus()
        self.config = config
        self.data = data
        self.model = FlatModel(config.model, features=data.features, classes=data.classes, device=device)
        self.torch = self.model.torch
        self.batch = max(1, round(config.sample_rate * data.rows))
        self.sample_rate = opacus_rate(config, data.rows)
        self.sum_scale = int(data.rows * self.sample_rate) / config.learning_rate

    def train(self, theta0: np.ndarray, insert: Insertions, rng: np.random.Generator, *,
              keep_iterates: bool = False) -> Trajectory:
        """Return the run's trajectory from θ₀ with `insert`'s rows in the data, its randomness seeded from `rng`."""
        if insert.gradient_count:
            raise InvalidParameterError("Opacus cannot take gradient-space (Dirac) canaries; use crafted or mislabelled ones.")
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Secure RNG turned off")
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            return self._train(theta0, insert, rng, keep_iterates)

    def losses(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Return the per-example losses of (x, y) under parameters θ."""
        return self.model.loss_values(theta, x, y)

    def _train(self, theta0: np.ndarray, insert: Insertions, rng: np.random.Generator, keep_iterates: bool) -> Trajectory:
        torch, opacus = self.torch, _import_opacus()
        module = self._module(theta0)
        optimizer = torch.optim.SGD(module.parameters(), lr=self.config.learning_rate)
        seeds = rng.integers(0, 2**63 - 1, size=2)
        loader = torch.utils.data.DataLoader(self._dataset(insert), batch_size=self.batch,
                                             generator=torch.Generator().manual_seed(int(seeds[0])))
        engine = opacus.PrivacyEngine(accountant="prv")
        module, optimizer, loader = engine.make_private(
            module=module, optimizer=optimizer, data_loader=loader, noise_multiplier=self.config.noise_multiplier,
            max_grad_norm=self.config.clip_norm, poisson_sampling=True,
            noise_generator=torch.Generator(device=self.model.device).manual_seed(int(seeds[1])),
        )
        iterates = [theta0] if keep_iterates else []
        for x, y in self._steps(loader):
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(module(x), y).backward()
            optimizer.step()
            if keep_iterates:
                iterates.append(self._flat(module))
        if not keep_iterates:
            iterates.append(self._flat(module))
        return Trajectory(np.stack(iterates))

    def _module(self, theta0: np.ndarray) -> Any:
        """Return a fresh module holding θ₀ (make_private hooks the module it wraps, so none is reused)."""
        module = make_model(self.config.model, features=self.data.features, classes=self.data.classes)
        with self.torch.no_grad():
            for param, value in zip(module.parameters(), self.model.params(self.model.tensor(theta0)).values()):
                param.copy_(value)
        return module.to(self.model.device)

    def _dataset(self, insert: Insertions) -> Any:
        x, y = self.data.x, self.data.y
        if insert.rows:
            x, y = np.concatenate([x, insert.x.astype(np.float32)]), np.concatenate([y, insert.y.astype(np.int64)])
        device = self.model.device
        return self.torch.utils.data.TensorDataset(self.torch.as_tensor(x, device=device),
                                                   self.torch.as_tensor(y, device=device))

    def _steps(self, loader: Any):
        """Yield T batches, going through the loader's epochs as often as needed."""
        done = 0
        while done < self.config.steps:
            for batch in loader:
                yield batch
                done += 1
                if done == self.config.steps:
                    return

    def _flat(self, module: Any) -> np.ndarray:
        return self.torch.cat([p.detach().reshape(-1) for p in module.parameters()]).cpu().numpy()
