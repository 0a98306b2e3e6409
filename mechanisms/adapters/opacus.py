"""Opacus' `make_private` as users call it, on a dataset of a few rows: the released model against Opacus' own ε.

(The DP-SGD games audit Opacus too, through mechanisms/dpsgd/opacus_target.py; this adapter is the
two-dataset audit of one user's call, registered as a library call.)

A user with a small table writes what Opacus' tutorials show: a
`DataLoader(TensorDataset(x, y), batch_size=B)`, a model and plain SGD,
`PrivacyEngine().make_private(module=..., optimizer=..., data_loader=...,
noise_multiplier=σ, max_grad_norm=C, poisson_sampling=True)`, some epochs
over the loader, then `engine.get_epsilon(δ)`. The mechanism here is that
program: a record is one number x in [-1, 1] (the feature, with target 1),
the model `Linear(1, dimension, bias=False)` starting at 0 with the mean
squared error, and the output the trained weights (`dimension` numbers),
what a user would publish.

- **Relation**: one row added or removed (NaN marks the absent row in
  dpaudit's datasets; the present rows, in order, are the dataset).
- **Claim**: Opacus' own accountant (`PrivacyEngine(accountant=...)`,
  PRV by default) read with `get_epsilon(δ)` after training on a dataset of
  `rows` rows and on one of `rows + 1` rows, the two sizes of the default
  pair; the claim is the larger (Opacus states each for its own dataset, and
  DP needs one ε for both). It is fixed when the mechanism is built: a pair
  of other sizes is audited against the same claim.
- **Default pair**, from the declared bounds only: `rows` records at 0
  against the same with a record at the bound 1 added.
- **Draws**: one training run per output, each from its own torch
  generators seeded from the audit's `rng` (data sampling and noise), so an
  audit repeats for its seed. Opacus' warning about its insecure generator
  is silenced (a seeded generator is what an audit needs). The model is
  built without drawing its initial weights (they are set to 0).
- **Replay** (`dpaudit replay opacus_make_private`): handed a replay's
  generator (`records_draws`), a run draws Opacus' noise and its Poisson
  uniforms from it, at Opacus' own two draw sites
  (`opacus_draws.drawing_from`), so the replay records each step's
  `normal(loc=clipped gradient sum, scale=σC)` and `random(size=rows)` and
  answers them on the neighbour; the torch generators Opacus is handed are
  then seeded from the system's entropy, so a draw that goes around those
  sites changes the release of D replayed on itself and is refused. The
  released weights are not the gradient sum plus the noise (divided by the
  expected batch size, then SGD steps), so the sampler declares no law of
  its released noise (`released_noise = False`): a move of the noise's
  location is priced by σC, a move of the weights alone is not priced.

Opacus 1.6.0 derives both its sampling rate and the divisor of the noisy
gradient sum from the private dataset's size: `sample_rate = 1 /
len(data_loader)` and `expected_batch_size = int(len(data_loader.dataset) *
sample_rate)` (opacus/privacy_engine.py, lines 440–441), so the noise in the
released weights, σC/expected_batch_size per step, depends on whether a row
is there (Opacus issues 571 and 819). docs/libraries.md gives what dpaudit
certifies.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import warnings
from typing import Any

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.adapters.opacus_draws import drawing_from
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.dpsgd.torch_support import import_optional
from dpaudit.mechanisms.neighbours import by_relation
from dpaudit.mechanisms.records import NumberRecords
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = ["opacus_make_private"]

OPACUS_HINT = "pip install torch==2.13.0 && pip install 'dpaudit[opacus]'"


def _modules() -> tuple[Any, Any]:
    """Return (torch, opacus), or raise a one-sentence error saying how to install them."""
    opacus = import_optional("opacus", needed_by="opacus_make_private", hint=OPACUS_HINT)
    import torch

    logging.getLogger("opacus").setLevel(logging.ERROR)  # "First batch is empty": Poisson batches may be, as they should
    return torch, opacus


class _Program:
    """The user's program: the loader, the model, `make_private`, `epochs` passes; returns the weights and Opacus' ε."""

    def __init__(self, *, batch_size: int, dimension: int, noise_multiplier: float, clip_norm: float, epochs: int,
                 learning_rate: float, delta: float, accountant: str) -> None:
        self.batch_size, self.dimension, self.epochs = batch_size, dimension, epochs
        self.noise_multiplier, self.clip_norm, self.learning_rate = noise_multiplier, clip_norm, learning_rate
        self.delta, self.accountant = delta, accountant

    def run(self, rows: np.ndarray, seed: int | None, *, account: bool = False,
            draws: np.random.Generator | None = None) -> tuple[np.ndarray, float | None]:
        """Return the weights trained on `rows` (float records) with seeds from `seed`, and Opacus' ε after training
        (`engine.get_epsilon(delta)`) when `account`, else None. With `draws` (a replay's generator, `seed` None),
        Opacus' noise and Poisson uniforms are drawn from it (`opacus_draws.drawing_from`)."""
        torch, opacus = _modules()
        loader_generator, noise_generator = _generators(torch, seed)
        x = torch.as_tensor(np.asarray(rows, dtype=np.float32).reshape(-1, 1))
        y = torch.ones(len(x), self.dimension)
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=self.batch_size,
                                             generator=loader_generator)
        model = torch.nn.utils.skip_init(torch.nn.Linear, 1, self.dimension, bias=False)  # no draw: set to 0 below
        torch.nn.init.zeros_(model.weight)
        optimizer = torch.optim.SGD(model.parameters(), lr=self.learning_rate)
        with warnings.catch_warnings(), drawing_from(draws) if draws is not None else contextlib.nullcontext():
            warnings.simplefilter("ignore")
            engine = opacus.PrivacyEngine(accountant=self.accountant)
            model, optimizer, loader = engine.make_private(
                module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=self.noise_multiplier,
                max_grad_norm=self.clip_norm, poisson_sampling=True, noise_generator=noise_generator)
            for _ in range(self.epochs):
                for xb, yb in loader:
                    optimizer.zero_grad()
                    torch.nn.functional.mse_loss(model(xb), yb).backward()
                    optimizer.step()
            epsilon = float(engine.get_epsilon(self.delta)) if account else None
        return model._module.weight.detach().numpy().ravel().astype(float), epsilon


def _generators(torch: Any, seed: int | None) -> tuple[Any, Any]:
    """Return the torch generators of the loader and the noise: seeded from `seed`, or from the system's entropy (None)."""
    made = (torch.Generator(), torch.Generator())
    if seed is None:
        for generator in made:
            generator.seed()
        return made
    states = np.random.SeedSequence(seed).generate_state(2)
    return made[0].manual_seed(int(states[0])), made[1].manual_seed(int(states[1]))


def _sampler(program: _Program) -> Any:
    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        values = np.asarray(data, dtype=float).ravel()
        rows = values[~np.isnan(values)]
        if getattr(rng, "records_draws", False):  # a replay's generator: Opacus draws through it
            return np.stack([program.run(rows, None, draws=rng)[0] for _ in range(size)])
        seeds = rng.integers(0, 2**63 - 1, size=size)
        return np.stack([program.run(rows, int(s))[0] for s in seeds])

    setattr(sample, "released_noise", False)  # the weights are not a value plus the noise: a replay prices no release move
    return sample


def opacus_make_private(*, rows: int = 2, batch_size: int = 2, dimension: int = 32, noise_multiplier: float = 3.0,
                        clip_norm: float = 1.0, epochs: int = 1, learning_rate: float = 1.0, delta: float = 1e-5,
                        accountant: str = "prv") -> Mechanism:
    """Return Opacus' `make_private` training on `rows` rows (batches of `batch_size`) as a mechanism (see the module).

    Claim: the larger of Opacus' own ε (its `accountant`, at `delta`) after training on `rows` and on
    `rows + 1` rows, the sizes of the default pair. Sound to compare with what dpaudit certifies on
    pairs of those sizes; Opacus' sampling rate 1/len(data_loader) and divisor read the dataset's size.
    """
    owner = "opacus_make_private"
    n = check_int(rows, "rows", owner)
    program = _Program(
        batch_size=check_int(batch_size, "batch_size", owner), dimension=check_int(dimension, "dimension", owner),
        noise_multiplier=check_real(noise_multiplier, "noise_multiplier", owner, low=0.0, low_open=True),
        clip_norm=check_real(clip_norm, "clip_norm", owner, low=0.0, low_open=True),
        epochs=check_int(epochs, "epochs", owner), learning_rate=check_real(learning_rate, "learning_rate", owner),
        delta=check_real(delta, "delta", owner, low=0.0, low_open=True, high=1.0, high_open=True),
        accountant=_accountant(accountant),
    )
    claims = {size: program.run(np.zeros(size), 0, account=True)[1] for size in (n, n + 1)}
    epsilon = max(claims.values())
    base = np.zeros(n)
    pair = (np.append(base, np.nan), np.append(base, 1.0))
    params = {"rows": n, "batch_size": batch_size, "dimension": dimension, "noise_multiplier": noise_multiplier,
              "clip_norm": clip_norm, "epochs": epochs, "learning_rate": learning_rate, "delta": delta,
              "accountant": accountant, "opacus_epsilon": {str(k): v for k, v in claims.items()}}
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent  # dp_accounting: loaded when one is built

    return Mechanism(
        name=owner, sampler=_sampler(program), claim=Claim(epsilon, delta), event=EpsilonDeltaDpEvent(epsilon, delta),
        default_pair=pair, neighbours=by_relation("add-remove", null_record=np.nan, records=NumberRecords(-1.0, 1.0)),
        null_record=np.nan, params=params,
        description=f"Opacus make_private (Poisson sampling) on {n} rows in batches of {batch_size}, "
                    f"{epochs} epoch(s), σ = {noise_multiplier:g}: the trained weights of Linear(1, {dimension}).",
    )


def _accountant(name: str) -> str:
    if name not in ("prv", "rdp", "gdp"):
        raise InvalidParameterError(
            f"The 'accountant' parameter of opacus_make_private must be 'prv', 'rdp' or 'gdp'; got {name!r} instead.")
    return name



if importlib.util.find_spec("opacus") is not None:
    # One training run per output, 40–60 ms each: the quick suite's 300 trials take about 30 s.
    register("opacus_make_private", expected="violation", suite_trials=0.0003)(opacus_make_private)
