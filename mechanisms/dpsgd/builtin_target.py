"""dpaudit's own DP-SGD trainer (a named bug or none) and Opacus as audit targets: a `DPSGDTarget` for a `DPSGDConfig`.

The claim of dpaudit's trainer is dp_accounting's PLD ε of the configuration
as its code claims it (the bugs' claims included: e.g. "accountant-rate"
claims a rate it does not use); the event is what the code does. Opacus'
claim is its own PRV accountant's ε.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any, Mapping

from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Claim, Relation
from dpaudit.mechanisms.dpsgd.accounting import actual_event, claimed_event, pld_epsilon, rdp_epsilon
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import TrainingData, load_data

if TYPE_CHECKING:
    import numpy as np
    from dp_accounting import dp_event

__all__ = ["BUILTIN_TARGETS", "DPAUDIT", "OPACUS", "BuiltinTarget"]

DPAUDIT, OPACUS = "dpaudit", "opacus"
BUILTIN_TARGETS = (DPAUDIT, OPACUS)


@dataclasses.dataclass(frozen=True)
class BuiltinTarget:
    """dpaudit's trainer ("dpaudit", with `config.bug` if any) or Opacus ("opacus") trained as `config` says."""

    config: DPSGDConfig
    kind: str = DPAUDIT
    picks_dataset = False

    def __post_init__(self) -> None:
        if self.kind not in BUILTIN_TARGETS:
            raise InvalidParameterError(
                f"The target must be one of {', '.join(BUILTIN_TARGETS)} or a UserTrainer; got {self.kind!r} instead."
            )
        if self.kind == OPACUS and self.config.bug is not None:
            raise InvalidParameterError("The Opacus target takes no bug option; the bugs are variants of dpaudit's trainer.")

    @property
    def name(self) -> str:
        """"opacus", or "dpsgd" with the bug's name: "dpsgd_no-clipping"."""
        return OPACUS if self.kind == OPACUS else "dpsgd" + (f"_{self.config.bug}" if self.config.bug else "")

    @property
    def label(self) -> str:
        """"dpaudit" or "opacus"."""
        return self.kind

    @property
    def runner(self) -> str:
        """The target's name, which each process resolves to its trainer once."""
        return self.kind

    def takes_gradients(self, rng: np.random.Generator) -> bool:
        """Return True for dpaudit's trainer, which inserts gradient canaries itself; False for the Opacus target,
        whose per-sample gradients come from Opacus' hooks and take input canaries only."""
        return self.kind != OPACUS

    @functools.cached_property
    def data(self) -> TrainingData:
        """The configuration's data."""
        return load_data(self.config.data)

    @property
    def params(self) -> Mapping[str, Any]:
        """The configuration."""
        return self.config.to_dict()

    @functools.cached_property
    def facts(self) -> Mapping[str, Any]:
        """Model, data, the sample rate the code uses, and the accountants' ε (Opacus' PRV and RDP, or dpaudit's RDP)."""
        facts: dict[str, Any] = {"model": self.config.model, "data": self.config.data, "sample_rate": self._rate}
        if self.kind == OPACUS:
            facts["opacus_prv_epsilon"] = self.claim.epsilon
            facts["opacus_rdp_epsilon"] = self._opacus_epsilon("rdp")
        else:
            facts["claim_rdp_epsilon"] = rdp_epsilon(claimed_event(self.config, self.data.rows), self.config.delta)
        return facts

    @functools.cached_property
    def claim(self) -> Claim:
        """The claim at the configuration's δ: Opacus' PRV accountant, or dp_accounting's PLD of the claimed event."""
        if self.kind == OPACUS:
            epsilon = self._opacus_epsilon("prv")
        else:
            epsilon = pld_epsilon(claimed_event(self.config, self.data.rows), self.config.delta)
        return Claim(epsilon, self.config.delta, Relation.ADD_REMOVE)

    @functools.cached_property
    def event(self) -> dp_event.DpEvent:
        """The event of what the code does (Opacus: the claimed event at the rate its sampler uses)."""
        if self.kind == OPACUS:
            return claimed_event(dataclasses.replace(self.config, sample_rate=self._rate), self.data.rows)
        return actual_event(self.config, self.data.rows)

    def identity(self) -> Any:
        """The target's name and configuration."""
        return {"target": self.kind, "config": self.config.to_dict()}

    @property
    def _rate(self) -> float:
        if self.kind == OPACUS:
            from dpaudit.mechanisms.dpsgd.opacus_target import opacus_rate

            return opacus_rate(self.config, self.data.rows)
        return self.config.sample_rate

    def _opacus_epsilon(self, accountant: str) -> float:
        from dpaudit.mechanisms.dpsgd.opacus_target import opacus_epsilon

        return opacus_epsilon(self.config, self.data.rows, accountant=accountant)
