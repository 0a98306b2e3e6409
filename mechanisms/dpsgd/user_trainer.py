"""A user's own training function as a DP-SGD audit target: final parameters (black-box) or every step's (white-box).

Wrap the function that trains your model, the function that scores
examples under trained parameters, your data and your claim:

    target = UserTrainer(train=my_train, losses=my_losses, x=x, y=y, claim=Claim(2.0, 1e-5))
    audit_dpsgd(target=target, canary="crafted", threat="white-box", runs=1000)

`train(x, y, rng)` returns the trained parameters (a flat array-like) or
every step's parameters (a sequence of them, or a 2-D array with one row
per step, θ₀ first to score the first step too); `rng` is a numpy Generator
to draw every random choice from, so a run is repeatable.
`losses(params, x, y)` returns the per-example losses. Input-space canaries
(crafted or mislabelled rows) are appended to `x, y` when included; the
training function must treat them as any other row. Dirac gradient canaries
need the two lines of `dpaudit.mechanisms.dpsgd.hook` in an Opacus loop.

State your step settings (`clip_norm`, `noise_multiplier`, `sample_rate`,
`learning_rate`, all four, for θ ← θ − lr·(Σ clip_C(g) + N(0, σ²C²I))/B,
with B your `batch_size` or else q·n, n the rows of the data the audit
trains on, canaries not counted: a normaliser fixed before the game, never
one that counts the canaries of a run) and the white-box score is each
step's likelihood ratio, and crafted canaries reach your clip norm; without them the score needs no setting and
the canaries form a ladder of gradient norms. The audit is sound whatever
the function does or states; the claim is yours, and dpaudit computes an
upper bound only when you pass the `event` your proof accounts.
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms.base import Claim
from dpaudit.mechanisms.dpsgd.data import TrainingData
from dpaudit.mechanisms.dpsgd.hook import HookRecord, hooked_run
from dpaudit.mechanisms.dpsgd.step_settings import StepSettings
from dpaudit.mechanisms.dpsgd.trainer import Insertions, Trajectory

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = ["UserTrainer"]

SETTINGS = ("clip_norm", "noise_multiplier", "sample_rate", "learning_rate")
OPACUS_NOTICES = ("Secure RNG turned off", "Full backward hook is firing")


class UserTrainer:
    """A training function, a loss function, the data and the claim they are audited against (a `DPSGDTarget`)."""

    picks_dataset = True

    def __init__(self, *, train: Callable[..., Any], losses: Callable[..., Any], x: Any, y: Any, claim: Claim,
                 event: dp_event.DpEvent | None = None, name: str = "user_training", clip_norm: float | None = None,
                 noise_multiplier: float | None = None, sample_rate: float | None = None,
                 learning_rate: float | None = None, batch_size: float | None = None) -> None:
        if not (callable(train) and callable(losses)):
            raise InvalidParameterError("UserTrainer needs callable train(x, y, rng) and losses(params, x, y).")
        if not isinstance(claim, Claim):
            raise InvalidParameterError(f"UserTrainer needs a Claim; got {type(claim).__name__}.")
        x, y = np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.int64)
        if x.ndim != 2 or y.shape != (len(x),) or len(y) == 0:
            raise InvalidParameterError(f"UserTrainer needs x of shape (n, f) and y of shape (n,), n ≥ 1; got {x.shape} and {y.shape}.")
        self.train_fn, self.losses_fn, self.claim, self.event, self.name = train, losses, claim, event, name
        self.settings = _settings(batch_size, clip_norm=clip_norm, noise_multiplier=noise_multiplier,
                                  sample_rate=sample_rate, learning_rate=learning_rate)
        self.data = self.user_data = TrainingData(name, x, y, int(y.max()) + 1)

    @property
    def label(self) -> str:
        """The name the report's attack gives the target: the trainer's name."""
        return self.name

    @property
    def runner(self) -> UserTrainer:
        """What a training run trains with: this trainer itself."""
        return self

    @property
    def params(self) -> dict[str, Any]:
        """No settings to list: the user's code holds them."""
        return {}

    @property
    def facts(self) -> dict[str, Any]:
        """No accounting facts beyond the user's claim."""
        return {}

    def identity(self) -> Any:
        """Return what identifies this target for a run store's fingerprint: name, code, data, claim, event, settings."""
        data = self.user_data
        return {"name": self.name, "train": self.train_fn, "losses": self.losses_fn, "x": data.x, "y": data.y,
                "claim": self.claim, "event": self.event, "settings": self.settings}

    @property
    def clip_norm(self) -> float | None:
        """The stated clip norm C, or None."""
        return None if self.settings is None else self.settings.clip_norm

    def on_rows(self, rows: np.ndarray) -> UserTrainer:
        """Return this trainer with its data cut to `rows` (indices; empty: the canaries alone); probes keep the user's data."""
        trainer = copy.copy(self)
        data = self.data
        trainer.data = TrainingData(data.name, data.x[rows], data.y[rows], data.classes)
        return trainer

    def on_data(self, x: np.ndarray, y: np.ndarray) -> UserTrainer:
        """Return this trainer training on the rows (x, y) instead of its data (an auditor's dataset); probes keep the user's data."""
        trainer = copy.copy(self)
        trainer.data = TrainingData(self.data.name, np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.int64),
                                    self.data.classes)
        return trainer

    def train(self, theta0: Any, insert: Insertions, rng: np.random.Generator, *,
              keep_iterates: bool = False) -> Trajectory:
        """Return the run's parameters with `insert`'s canaries in: every step's when `keep_iterates`, else the last.

        Input canaries are rows appended to the data; gradient canaries
        (`insert.gradients`, even none of them this run) go through the hook,
        which records the iterates and the optimizer's settings.
        """
        if insert.gradients is not None:
            return self._hooked(insert.gradients, rng, keep_iterates)
        x, y = self.data.x, self.data.y
        if insert.rows:
            x, y = np.concatenate([x, insert.x.astype(np.float32)]), np.concatenate([y, insert.y.astype(np.int64)])
        iterates = self._iterates(self._call(self.train_fn, x, y, rng), rows=len(y))
        if keep_iterates and len(iterates) < 2:
            raise InvalidParameterError(
                f"A white-box audit of {self.name} needs every step's parameters, but train(x, y, rng) returned one "
                "vector: return a sequence or a 2-D array (one row per step), or audit with threat='black-box'."
            )
        return Trajectory(iterates if keep_iterates else iterates[-1:], rows=self.data.rows, settings=self.settings)

    def initial(self, rng: np.random.Generator) -> np.ndarray:
        """Return the first parameters a training run on the user's data releases (θ₀ when it returns every step).

        A probe run outside the game: canaries chosen from it are fixed before any audited run.
        """
        return self._iterates(self._call(self.train_fn, self.user_data.x, self.user_data.y, rng))[0]

    def probe(self, rng: np.random.Generator) -> HookRecord:
        """Return the hook's record of a canary-free run (parameter layout, first step's activity, settings).

        Raises:
            InvalidParameterError: when the training function never stepped a watched optimizer.
        """
        return self._checked(self._probe_record(rng))

    def takes_gradients(self, rng: np.random.Generator) -> bool:
        """Return True when gradient (Dirac) canaries can enter the loop: a probe run steps a watched optimizer."""
        return _hooked_steps(self._probe_record(rng))

    def probe_here(self, rng: np.random.Generator) -> HookRecord:
        """Return the hook's record of a canary-free probe run (outside the game) on the data the audit trains on.

        Raises:
            InvalidParameterError: when the training function never stepped a watched optimizer.
        """
        return self._checked(self._probe_record(rng, self.data))

    def _probe_record(self, rng: np.random.Generator, data: TrainingData | None = None) -> HookRecord:
        """Return what the hook recorded of a canary-free run on `data` (default the user's; a probe, outside the game)."""
        data = self.user_data if data is None else data
        with hooked_run(None, rng, rows=max(1, data.rows), probe=True) as record, _opacus_notices_off():
            self._call(self.train_fn, data.x, data.y, rng)
        return record

    def _hooked(self, gradients: np.ndarray, rng: np.random.Generator, keep_iterates: bool) -> Trajectory:
        """Return the trajectory the hook recorded of one run with `gradients` as canaries."""
        canary_rng = np.random.default_rng(rng.integers(2**63))
        with hooked_run(gradients, canary_rng, rows=max(1, self.data.rows)) as record, _opacus_notices_off():
            self._call(self.train_fn, self.data.x, self.data.y, rng)
        iterates = np.array(self._checked(record).iterates)
        return Trajectory(iterates if keep_iterates else iterates[-1:], rows=self.data.rows, settings=_read(record.settings))

    def _checked(self, record: HookRecord) -> HookRecord:
        if not _hooked_steps(record):
            raise InvalidParameterError(
                f"Gradient canaries enter {self.name} through the hook: add `optimizer = watch(optimizer)` "
                "(from dpaudit.mechanisms.dpsgd.hook) after make_private in its training function."
            )
        return record

    def losses(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Return the user's per-example losses of (x, y) under `params`: one number per row, +∞ allowed (probability 0), no NaN."""
        values = np.asarray(self._call(self.losses_fn, params, x, y), dtype=np.float64).reshape(-1)
        if values.shape != (len(y),) or np.any(np.isnan(values)):
            raise MechanismError(f"{self.name}: losses(params, x, y) must return {len(y)} numbers, none of them NaN.")
        return values

    def _iterates(self, params: Any, rows: int | None = None) -> np.ndarray:
        """Return what train() returned as a (steps, P) float64 array, checked to be finite and of one width (`rows`: the
        rows it trained on, named when it failed on none: a loop dividing by its row count cannot train on the canaries
        alone when none of them joined the run)."""
        try:
            values = np.asarray(params, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise MechanismError(f"{self.name}: train(x, y, rng) must return parameters of one length; {exc}.") from exc
        values = values.reshape(1, -1) if values.ndim <= 1 else values.reshape(len(values), -1)
        if values.size == 0 or not np.all(np.isfinite(values)):
            where = " on 0 rows (no canary joined this run of the canaries alone: train must accept an empty dataset)"
            raise MechanismError(f"{self.name}: train(x, y, rng) returned empty or non-finite parameters{where if rows == 0 else ''}.")
        return values

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:  # user code: any failure becomes one sentence
            raise MechanismError(f"{self.name}: {fn.__name__} raised {type(exc).__name__}: {exc}.") from exc


@contextlib.contextmanager
def _opacus_notices_off() -> Iterator[None]:
    """Silence the two notices Opacus prints on every run of a training script (not errors; a thousand runs repeat them)."""
    with warnings.catch_warnings():
        for notice in OPACUS_NOTICES:
            warnings.filterwarnings("ignore", message=notice)
        yield


def _read(settings: dict[str, Any]) -> StepSettings | None:
    """Return the settings a hooked optimizer stepped with, or None when its update is not plain noisy SGD (no LR score)."""
    usable = settings["plain_sgd"] and settings["noise_multiplier"] > 0 and settings["clip_norm"] > 0
    return StepSettings(settings["clip_norm"], settings["noise_multiplier"], settings["sample_rate"],
                        settings["learning_rate"], batch=settings["expected_batch_size"]) if usable else None


def _settings(batch_size: float | None, **stated: float | None) -> StepSettings | None:
    """Return the stated step settings (with the stated normaliser B), None when none is stated; one sentence when only some are."""
    given = [name for name, value in stated.items() if value is not None]
    if not given:
        if batch_size is not None:
            raise InvalidParameterError("UserTrainer's batch_size normalises the stated step settings; state all four with it.")
        return None
    if len(given) < len(SETTINGS):
        missing = ", ".join(name for name in SETTINGS if name not in given)
        raise InvalidParameterError(f"UserTrainer needs all four step settings or none; {missing} missing.")
    return StepSettings(**stated, batch=batch_size)


def _hooked_steps(record: HookRecord) -> bool:
    """Return True when the run stepped a watched optimizer at least once (θ₀ and one step recorded)."""
    return record.hooked and len(record.iterates) >= 2
