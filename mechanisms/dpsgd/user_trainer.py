"""A user's own training function as a DP-SGD audit target (black-box: final parameters only).

Wrap the function that trains your model, the function that scores
examples under trained parameters, your data and your claim:

    target = UserTrainer(train=my_train, losses=my_losses, x=x, y=y, claim=Claim(2.0, 1e-5))
    audit_dpsgd(target=target, canary="mislabelled", threat="black-box", runs=200)

`train(x, y, rng)` returns the trained parameters (any array-like; `rng` is
a numpy Generator to draw every random choice from, so a run is repeatable),
`losses(params, x, y)` the per-example losses. Input-space canaries
(mislabelled or crafted rows) are appended to `x, y` when included; the
training function must treat them as any other row. The audit is sound
whatever the function does; the claim is yours, and dpaudit computes an
upper bound only when you pass the `event` your proof accounts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from dpaudit.mechanisms.base import Claim
from dpaudit.mechanisms.dpsgd.data import TrainingData
from dpaudit.mechanisms.dpsgd.trainer import Insertions, Trajectory
from dpaudit.mechanisms.errors import InvalidParameterError, MechanismError

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = ["UserTrainer"]


class UserTrainer:
    """A training function, a loss function, the data and the claim they are audited against."""

    def __init__(self, *, train: Callable[..., Any], losses: Callable[..., Any], x: Any, y: Any, claim: Claim,
                 event: dp_event.DpEvent | None = None, name: str = "user_training") -> None:
        if not (callable(train) and callable(losses)):
            raise InvalidParameterError("UserTrainer needs callable train(x, y, rng) and losses(params, x, y).")
        if not isinstance(claim, Claim):
            raise InvalidParameterError(f"UserTrainer needs a Claim; got {type(claim).__name__}.")
        x, y = np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.int64)
        if x.ndim != 2 or y.shape != (len(x),):
            raise InvalidParameterError(f"UserTrainer needs x of shape (n, f) and y of shape (n,); got {x.shape} and {y.shape}.")
        self.train_fn, self.losses_fn, self.claim, self.event, self.name = train, losses, claim, event, name
        self.data = TrainingData(name, x, y, int(y.max()) + 1)

    def train(self, theta0: Any, insert: Insertions, rng: np.random.Generator, *,
              keep_iterates: bool = False) -> Trajectory:
        """Return the trained parameters (the only iterate a user's function releases) with `insert`'s rows added."""
        if insert.gradient_count:
            raise InvalidParameterError("A user's training function takes input-space canaries only (mislabelled or crafted).")
        x, y = self.data.x, self.data.y
        if insert.rows:
            x, y = np.concatenate([x, insert.x.astype(np.float32)]), np.concatenate([y, insert.y.astype(np.int64)])
        params = self._call(self.train_fn, x, y, rng)
        return Trajectory(np.asarray(params, dtype=np.float64).reshape(1, -1))

    def losses(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Return the user's per-example losses of (x, y) under `params`, checked to be one finite number per row."""
        values = np.asarray(self._call(self.losses_fn, params, x, y), dtype=np.float64).reshape(-1)
        if values.shape != (len(y),) or not np.all(np.isfinite(values)):
            raise MechanismError(f"{self.name}: losses(params, x, y) must return {len(y)} finite numbers.")
        return values

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:  # user code: any failure becomes one sentence
            raise MechanismError(f"{self.name}: {fn.__name__} raised {type(exc).__name__}: {exc}.") from exc
