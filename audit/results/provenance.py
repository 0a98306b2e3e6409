"""Where a result's bound comes from: the selection it won (`Selection`) and the bound it was first certified under (`Recertified`).

A result that is the winner of a selection made on evidence (the best
round of `trials="auto"`, the best of several arms played in the same runs,
such as a ladder of canaries) keeps every
candidate the selection compared and the share of β each was paid, so that
`recertify` can pay for the same selection again under another bound
instead of certifying the winner alone at all of β (which inflates the
bound: the best of K draws is above its own quantile more often than β).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from dpaudit.audit.estimators.lower_bound import LowerBound

if TYPE_CHECKING:
    from dpaudit.audit.estimators.certify import Bound

__all__ = ["ARMS", "ROUNDS", "Recertified", "Selection", "bound_dict"]

ROUNDS = "rounds of trials='auto'"
ARMS = "arms played in the same runs"


@dataclasses.dataclass(frozen=True)
class Selection:
    """A choice an audit made on evidence: every candidate it compared, the share of β each was paid, the one kept.

    Attributes:
        kind: what was compared (`ROUNDS` or `ARMS`).
        candidates: the rounds' results (`AuditResult`, each with its evidence) or the arms' `Observations`.
        shares: the fraction of β each candidate was certified at; they sum to at most 1 (union bound), so all
            candidates' bounds hold at once with probability ≥ 1 − β and the largest with them.
        kept: the index of the candidate the result reports.
    """

    kind: str
    candidates: tuple[Any, ...]
    shares: tuple[float, ...]
    kept: int

    def confidence_of(self, k: int, confidence: float) -> float:
        """Return the confidence candidate k is certified at when the whole selection is at `confidence`: 1 − β·share."""
        return 1.0 - (1.0 - confidence) * self.shares[k]

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON `selection` object: what was compared, how many, each one's share of β, the one kept."""
        return {"compared": self.kind, "candidates": len(self.candidates), "shares_of_beta": list(self.shares),
                "kept": self.kept}


@dataclasses.dataclass(frozen=True)
class Recertified:
    """That `recertify` certified a result again: the bound it was first certified under, and the bound that gave."""

    first_bound: Bound | None
    first_lower_bound: LowerBound

    def describe(self) -> str:
        """Return one line for the report's table: what the first certificate was."""
        lb = self.first_lower_bound
        return f"first certified ε = {lb.epsilon:.4f} at confidence {lb.confidence:g} [{lb.method}]"

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON `recertified` object: the first bound's settings and the lower bound it gave."""
        return {"first_bound": bound_dict(self.first_bound), "first_lower_bound": self.first_lower_bound.to_dict()}


def bound_dict(bound: Bound | None) -> dict[str, Any] | None:
    """Return a `Bound` as JSON (estimator, confidence, δ, strategy by its short label), or None."""
    if bound is None:
        return None
    strategy = None if bound.strategy is None else bound.strategy.describe()
    return {"estimator": bound.estimator, "confidence": bound.confidence, "delta": bound.delta, "strategy": strategy}
