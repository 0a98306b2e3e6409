"""Gradient canaries inside a user's own Opacus training loop: one added line, `optimizer = watch(optimizer)`.

Outside `hooked_run` a watched optimizer behaves exactly as before (same
calls, same results bit for bit). Inside it, at every optimizer step and
before Opacus reads the per-sample gradients, each canary gradient joins
the batch independently with probability q = expected_batch_size / rows
(Poisson sampling, as an example is sampled) and is appended to every
parameter's `grad_sample`. The optimizer's own clipping, summation, noise
and scaling then treat it as one more example, whatever a user's subclass
does there: the audit tests the code that runs, bugs included (Nasr et
al. 2023's Dirac canaries in a white-box, all-iterates threat model).

The canaries enter in `pre_step`, which `DPOptimizer.step` calls after any
closure and before `clip_and_accumulate`; both methods are wrapped on the
instance, so overrides in a subclass still run inside the wrappers.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Iterator
from typing import Any, Callable

import numpy as np
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms.dpsgd.opacus_target import OPACUS_HINT
from dpaudit.mechanisms.dpsgd.torch_support import import_optional, import_torch

__all__ = ["HookRecord", "hooked_run", "watch"]

_RUN: contextvars.ContextVar[_Run | None] = contextvars.ContextVar("dpaudit_hooked_run", default=None)


@dataclasses.dataclass
class HookRecord:
    """What one hooked training run recorded; filled in while the run trains.

    `iterates` holds θ₀ (taken at the first step) and θ after every step that
    updated the parameters, flat in `optimizer.params` order, as float64.
    `settings` are the first step's; `plain_sgd` turns False if a later step
    ran with other settings. `activity` (probe runs only) is the first
    step's Σ over examples of |per-sample gradient|, before clipping.
    """

    iterates: list[np.ndarray] = dataclasses.field(default_factory=list)
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    sizes: list[int] = dataclasses.field(default_factory=list)
    bias_mask: np.ndarray | None = None
    activity: np.ndarray | None = None
    hooked: bool = False

    @property
    def size(self) -> int:
        """P, the number of trained coordinates."""
        return sum(self.sizes)


def watch(optimizer: Any) -> Any:
    """Return `optimizer`, an Opacus `DPOptimizer`, instrumented for `hooked_run` (a no-op outside it)."""
    if not isinstance(optimizer, _opacus_optimizers().DPOptimizer):
        raise InvalidParameterError(
            f"watch() needs the DPOptimizer that Opacus' PrivacyEngine.make_private returns; got {type(optimizer).__name__}."
        )
    if "_dpaudit_step" not in vars(optimizer):
        optimizer._dpaudit_step, optimizer._dpaudit_pre_step = optimizer.step, optimizer.pre_step
        optimizer.step = _hooked_step.__get__(optimizer)
        optimizer.pre_step = _hooked_pre_step.__get__(optimizer)
    return optimizer


@contextlib.contextmanager
def hooked_run(gradients: np.ndarray | None, rng: Any, *, rows: int, probe: bool = False) -> Iterator[HookRecord]:
    """Yield the record of the one training run inside; watched optimizers step with `gradients` (k, P) as canaries.

    `rows` is the number of real training rows n, so that q = expected_batch_size / n;
    `rng` draws the canaries' sampling. A probe run (`probe=True`, no gradients)
    only records sizes, the bias mask and the first step's activity.
    """
    if _RUN.get() is not None:
        raise InvalidParameterError("hooked_run contexts cannot be nested: each records exactly one training run.")
    run = _Run(_checked_gradients(gradients, probe), np.random.default_rng(rng), _checked_rows(rows), probe)
    token = _RUN.set(run)
    try:
        yield run.record
    finally:
        _RUN.reset(token)


def _opacus_optimizers() -> Any:
    """Return `opacus.optimizers`, or raise a one-sentence error saying how to install Opacus."""
    return import_optional("opacus.optimizers", needed_by="Gradient canaries in Opacus", hint=OPACUS_HINT)


def _hooked_step(self: Any, closure: Callable[[], float] | None = None) -> Any:
    """The watched optimizer's step: its own step outside hooked_run, recorded inside it."""
    run = _RUN.get()
    return self._dpaudit_step(closure) if run is None else run.step(self, closure)


def _hooked_pre_step(self: Any, closure: Callable[[], float] | None = None) -> Any:
    """The watched optimizer's pre_step: its own outside hooked_run, with this step's canaries added inside it."""
    run = _RUN.get()
    return self._dpaudit_pre_step(closure) if run is None else run.pre_step(self, closure)


def _checked_gradients(gradients: np.ndarray | None, probe: bool) -> np.ndarray | None:
    if gradients is None:
        return None
    if probe:
        raise InvalidParameterError("A probe run inserts nothing: pass gradients=None with probe=True.")
    values = np.asarray(gradients, dtype=np.float64)
    if values.ndim != 2 or not np.all(np.isfinite(values)):
        raise InvalidParameterError(f"The canary gradients must be a finite (k, P) array; got shape {values.shape}.")
    return values


def _checked_rows(rows: int) -> int:
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise InvalidParameterError(f"The 'rows' parameter of hooked_run must be a positive integer; got {rows!r} instead.")
    return int(rows)


class _Run:
    """The state of one hooked run: its canaries, their sampling, the optimizer it watches and its record."""

    def __init__(self, gradients: np.ndarray | None, rng: np.random.Generator, rows: int, probe: bool) -> None:
        self.gradients, self.rng, self.rows, self.probe = gradients, rng, rows, probe
        self.record = HookRecord()
        self.optimizer: Any = None
        self.stepped: bool | None = None

    def step(self, optimizer: Any, closure: Callable[[], float] | None) -> Any:
        """Run the optimizer's own step, recording θ₀ first and θ after it when it updated the parameters."""
        self._attach(optimizer)
        self.stepped = None
        result = optimizer._dpaudit_step(closure)
        if self.stepped is None:
            raise MechanismError(f"{type(optimizer).__name__}.step() never called pre_step(), where Opacus clips and canaries enter.")
        if self.stepped:
            self._count_step(optimizer)
            self.record.iterates.append(_flat(optimizer.params))
        return result

    def pre_step(self, optimizer: Any, closure: Callable[[], float] | None) -> Any:
        """Add this step's sampled canaries to the per-sample gradients (or probe them), then run Opacus' pre_step."""
        self._attach(optimizer)
        if self.probe and self.record.activity is None:
            self.record.activity = _activity(optimizer, self.record.sizes)
        elif self.gradients is not None and not optimizer._check_skip_next_step(pop_next=False):
            self._insert(optimizer)
        result = optimizer._dpaudit_pre_step(closure)
        self.stepped = bool(result)
        return result

    def _attach(self, optimizer: Any) -> None:
        """Bind the run to its first stepping optimizer: record θ₀, sizes and the bias mask, check the canaries fit."""
        if optimizer is self.optimizer:
            return
        if self.optimizer is not None:
            raise MechanismError("Two different optimizers stepped inside one hooked_run, which records one training run.")
        if isinstance(optimizer, _opacus_optimizers().DPOptimizerFastGradientClipping):
            raise MechanismError("Ghost clipping keeps no per-sample gradients for canaries to join; use grad_sample_mode='hooks'.")
        params = optimizer.params
        self.optimizer, self.record.hooked = optimizer, True
        self.record.sizes = [p.numel() for p in params]
        self.record.bias_mask = np.repeat(np.array([p.dim() == 1 for p in params], dtype=bool), self.record.sizes)
        if self.gradients is not None and self.gradients.shape[1] != self.record.size:
            raise MechanismError(
                f"The canary gradients have {self.gradients.shape[1]} coordinates but the optimizer trains {self.record.size}."
            )
        self.record.iterates.append(_flat(params))

    def _insert(self, optimizer: Any) -> None:
        """Append each canary with probability q to every parameter's grad_sample, split and shaped by parameter."""
        chosen = self.gradients[self.rng.random(len(self.gradients)) < _sample_rate(optimizer, self.rows)]
        if not len(chosen):
            return
        params = optimizer.params
        if any(isinstance(p.grad_sample, list) for p in params):
            raise MechanismError("Gradient canaries need one backward pass per optimizer step; this step accumulated several.")
        torch = import_torch()
        stops = np.cumsum(self.record.sizes)
        for p, start, stop in zip(params, stops - self.record.sizes, stops):
            extra = torch.as_tensor(chosen[:, start:stop].reshape(len(chosen), *p.shape), dtype=p.dtype, device=p.device)
            p.grad_sample = _appended(torch, p.grad_sample, extra)

    def _count_step(self, optimizer: Any) -> None:
        """Keep the first step's settings and count the step; plain_sgd holds only if no setting changed since."""
        current = _settings(optimizer, self.rows)
        first = self.record.settings or {**current, "steps": 0}
        constant = all(first[key] == value for key, value in current.items())
        self.record.settings = {**first, "plain_sgd": first["plain_sgd"] and constant, "steps": first["steps"] + 1}


def _appended(torch: Any, current: Any, extra: Any) -> Any:
    """Return `current` per-sample gradients with `extra` rows after them, keeping Opacus' already-used mark."""
    if current is None:
        return extra
    joined = torch.cat([current, extra.to(current)])
    if hasattr(current, "_processed"):
        joined._processed = True
    return joined


def _sample_rate(optimizer: Any, rows: int) -> float:
    """Return q = expected_batch_size / rows, the rate at which Opacus scales the step, checked to be in (0, 1]."""
    expected = optimizer.expected_batch_size
    if expected is None or not 0 < expected <= rows:
        raise MechanismError(f"The optimizer's expected batch size must be in [1, rows={rows}] to sample canaries; got {expected}.")
    return expected / rows


def _settings(optimizer: Any, rows: int) -> dict[str, Any]:
    """Return the optimizer's DP-SGD settings, and whether its update is plain SGD by (Σ clipped + noise)/expected batch."""
    torch = import_torch()
    inner = optimizer.original_optimizer
    groups = inner.param_groups
    expected = optimizer.expected_batch_size
    plain = type(inner) is torch.optim.SGD and optimizer.loss_reduction == "mean" and all(
        g["lr"] == groups[0]["lr"] and g["momentum"] == 0 and g["weight_decay"] == 0 and not g["maximize"] for g in groups
    )
    return {
        "noise_multiplier": float(optimizer.noise_multiplier),
        "clip_norm": float(optimizer.max_grad_norm),
        "expected_batch_size": expected,
        "learning_rate": float(groups[0]["lr"]),
        "sample_rate": None if expected is None else expected / rows,
        "plain_sgd": plain,
    }


def _activity(optimizer: Any, sizes: list[int]) -> np.ndarray:
    """Return Σ over the batch of |per-sample gradient|, flat over parameters (zero where none was computed)."""
    torch = import_torch()
    parts = []
    for p, size in zip(optimizer.params, sizes):
        samples = torch.cat(p.grad_sample) if isinstance(p.grad_sample, list) else p.grad_sample
        parts.append(np.zeros(size) if samples is None else samples.detach().abs().sum(0).reshape(-1).double().cpu().numpy())
    return np.concatenate(parts)


def _flat(params: list[Any]) -> np.ndarray:
    """Return the parameters as one float64 numpy vector, in order."""
    torch = import_torch()
    return torch.cat([p.detach().reshape(-1) for p in params]).double().cpu().numpy()
