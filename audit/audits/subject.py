"""What an audit is about, for its report: the subject of a membership audit (its name, parameters, claim, upper bound)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

from dpaudit.audit.theory.upper_bound import UpperBound, theory_upper_bound
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Claim, Mechanism

__all__ = ["Subject", "mechanism_subject"]


@dataclasses.dataclass(frozen=True)
class Subject:
    """What an audit is about, for its report: a name, parameters, the claim and the theory upper bound at δ."""

    name: str | None = None
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    claim: Claim | None = None
    upper_bound: Callable[[float], UpperBound | None] = lambda delta: None


def mechanism_subject(mech: Mechanism) -> Subject:
    """Return what an audit of `mech` reports: its name, parameters, claim and theory upper bound."""
    if not isinstance(mech, Mechanism):
        raise InvalidParameterError(
            f"A membership audit needs a Mechanism; got {type(mech).__name__} (wrap a function with dpaudit.mechanisms.blackbox)."
        )
    return Subject(mech.name, dict(mech.params), mech.claim, lambda delta: theory_upper_bound(mech, delta))
