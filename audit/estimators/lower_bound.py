"""The result every estimator returns: an ε lower bound with its confidence and evidence."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

from dpaudit.json_values import jsonable

__all__ = ["LowerBound"]


@dataclasses.dataclass(frozen=True)
class LowerBound:
    """An ε lower bound that holds with probability `confidence` over the audit's randomness.

    Meaning: with confidence `confidence`, the mechanism is not (ε', δ)-DP for
    any ε' < `epsilon` at the stated `delta`. `assumption` is None for
    assumption-free bounds and names the assumption otherwise (e.g. a GDP
    bound holds only if the trade-off curve is Gaussian-shaped).

    `fpr`/`fnr` are the observed (point-estimate) rates of the test whose
    upper confidence bounds gave the number; `guesses` and `correct` count
    the membership guesses the bound rests on and how many were right (None
    for two-dataset tests); `test` names the test an estimator chose itself
    (the bands' threshold), else None; `details` holds estimator-specific evidence for
    the JSON (counts, thresholds, rules), which no other layer reads.
    `estimator` is the name of the estimator that certified the bound as
    `Bound(estimator=...)` and the CLI's `--estimator` spell it (set by
    `certify`; None for a bound made outside it), where `method` says how
    it computed it (e.g. estimator "threshold", method "dominating-pair").
    """

    epsilon: float
    confidence: float
    method: str
    delta: float = 0.0
    trials: int = 0
    fpr: float | None = None
    fnr: float | None = None
    assumption: str | None = None
    details: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    guesses: int | None = None
    correct: int | None = None
    test: str | None = None
    estimator: str | None = None

    def meaning(self) -> str:
        """Return the one-sentence statement of what this bound certifies (at ε = 0: that nothing was certified)."""
        if not self.epsilon > 0:
            text = (f"Nothing was certified: at confidence {self.confidence:.4g} the evidence rules out no "
                    f"(ε', {self.delta:g})-DP claim")
        else:
            text = (
                f"With confidence {self.confidence:.4g}, the mechanism is not "
                f"(ε', {self.delta:g})-DP for any ε' < {self.epsilon:.4g}"
            )
        if self.assumption:
            text += f", assuming {self.assumption}"
        return text + "."

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready form (the `lower_bound` object of an audit's JSON)."""
        out: dict[str, Any] = {
            "epsilon": _finite_or_none(self.epsilon),
            "confidence": self.confidence,
            "method": self.method,
            "delta": self.delta,
            "trials": self.trials,
            "fpr": self.fpr,
            "fnr": self.fnr,
        }
        if self.assumption:
            out["assumption"] = self.assumption
        if self.estimator:
            out["estimator"] = self.estimator
        out.update(jsonable(self.details))
        return out


def _finite_or_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None
