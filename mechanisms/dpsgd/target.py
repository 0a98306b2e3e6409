"""The protocol every DP-SGD audit target follows: what it is called, what it claims, and how its runs are trained.

dpaudit's trainer (bugs included), Opacus and a user's own training
function (`UserTrainer`) are audited by one path: the audit reads the
target's name, claim, event and parameters from it, and hands `runner` to
the training runs (a name that each process resolves to its trainer once,
or the user's trainer itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Protocol, runtime_checkable

from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Claim
from dpaudit.mechanisms.dpsgd.data import TrainingData

if TYPE_CHECKING:
    import numpy as np
    from dp_accounting import dp_event

__all__ = ["DPSGDTarget", "resolve_target"]


@runtime_checkable
class DPSGDTarget(Protocol):
    """A DP-SGD training target: its name, claim, the event of what its code does, and its runs' trainer.

    Attributes:
        name: the name of the report ("dpsgd", "dpsgd_no-clipping", "opacus", a user's name).
        claim: the (ε, δ) claim the audit tests, about add-remove neighbours.
        event: the dp_accounting event of what the code does (dpaudit's upper bound), or None when unknown.
        params: the settings the report lists (a configuration, or none for a user's loop).
        facts: accounting facts for the report (e.g. Opacus' own ε).
        data: the data its runs train on besides the canaries.
        runner: what a training run resolves to its trainer (a target name, or a user's trainer itself).
        label: the target as the report's attack names it ("dpaudit", "opacus", or a user's name).
        picks_dataset: True when the audit may train it on datasets of its choosing (a user's loop, given
            its rows); False for a target that trains on its configuration's data.
    """

    name: str
    label: str
    picks_dataset: bool
    claim: Claim
    event: dp_event.DpEvent | None
    data: TrainingData

    @property
    def params(self) -> Mapping[str, Any]: ...

    @property
    def facts(self) -> Mapping[str, Any]: ...

    @property
    def runner(self) -> Any: ...

    def identity(self) -> Any:
        """Return what identifies the target for a run store's fingerprint."""

    def takes_gradients(self, rng: np.random.Generator) -> bool:
        """Return True when gradient (Dirac) canaries can enter its runs (canary="auto" then plays them)."""


def resolve_target(target: Any, config: Any) -> DPSGDTarget:
    """Return the target as a `DPSGDTarget`: a name ("dpaudit", "opacus") resolved once for `config`, or `target` itself.

    Raises:
        InvalidParameterError: for another name or object (one sentence).
    """
    from dpaudit.mechanisms.dpsgd.builtin_target import BUILTIN_TARGETS, BuiltinTarget

    if isinstance(target, str):
        return BuiltinTarget(config, target)
    if not isinstance(target, DPSGDTarget):
        raise InvalidParameterError(
            f"The target must be one of {', '.join(BUILTIN_TARGETS)} or a UserTrainer; got {type(target).__name__} instead."
        )
    return target
