"""The frozen result of one audit, with its JSON form and a readable summary."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

from dpaudit.audit.estimators.lower_bound import LowerBound, jsonable
from dpaudit.audit.results.render import fmt, key_value_table, plain_text
from dpaudit.audit.theory.upper_bound import UpperBound
from dpaudit.mechanisms.base import Claim
from rich.table import Table

VIOLATION = "violation"
CONSISTENT = "consistent"
VIOLATION_UNDER_ASSUMPTION = "violation-under-assumption"
VERDICTS = (CONSISTENT, VIOLATION, VIOLATION_UNDER_ASSUMPTION)
"""The one verdict vocabulary of every audit: only an assumption-free bound above the claim is a "violation"."""


def refutes(lower: LowerBound, claim: Claim) -> bool:
    """Return True when `lower` shows that the mechanism is not (claim.epsilon, claim.delta)-DP."""
    return lower.epsilon > claim.epsilon and lower.delta >= claim.delta


@dataclasses.dataclass(frozen=True)
class AuditResult:
    """Claim, theory upper bound, certified lower bound, verdict and provenance of one audit.

    `verdict` is "violation" when the assumption-free lower bound exceeds the
    claimed ε, else "consistent". `secondary` holds further bounds computed
    from the same counts under an assumption (e.g. Gaussian DP), labelled so.
    """

    mechanism: str
    params: Mapping[str, Any]
    claim: Claim
    upper_bound: UpperBound
    lower_bound: LowerBound
    seconds: float
    seed: int
    test: str = ""
    secondary: tuple[LowerBound, ...] = ()

    @property
    def verdict(self) -> str:
        """Return "violation" if the lower bound refutes the claim, else "consistent".

        A bound at δ' refutes (ε, δ)-DP only when δ' ≥ δ (every (ε, δ)-DP
        mechanism is (ε, δ')-DP for δ' ≥ δ); one taken at a smaller δ' says
        nothing about the claim.
        """
        return VIOLATION if refutes(self.lower_bound, self.claim) else CONSISTENT

    @property
    def tightness(self) -> float | None:
        """Return lower/upper bound, or None when the upper bound is unknown, infinite or 0."""
        upper = self.upper_bound.epsilon
        if not math.isfinite(upper) or upper <= 0:
            return None
        return self.lower_bound.epsilon / upper

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON of one audit (DESIGN.md); keys are only ever added."""
        out = {
            "mechanism": self.mechanism,
            "params": jsonable(self.params),
            "claim": self.claim.to_dict(),
            "upper_bound": self.upper_bound.to_dict(),
            "lower_bound": self.lower_bound.to_dict(),
            "verdict": self.verdict,
            "tightness": self.tightness,
            "seconds": round(self.seconds, 4),
            "seed": self.seed,
            "test": self.test,
            "meaning": self.lower_bound.meaning(),
        }
        if self.secondary:
            out["secondary_bounds"] = [b.to_dict() for b in self.secondary]
        return out

    def table(self) -> Table:
        """Return a rich table of the audit."""
        title = f"dpaudit: {self.mechanism}"
        lb, ub = self.lower_bound, self.upper_bound
        method = ", ".join([lb.method] + ([lb.details["interval"]] if "interval" in lb.details else []))
        rows = [
            ("claim", self.claim.describe()),
            ("upper bound (theory)", f"ε = {fmt(ub.epsilon)} at δ = {ub.delta:g} [{ub.method}]"),
            ("lower bound (certified)", f"ε = {lb.epsilon:.4f} at confidence {lb.confidence:g} [{method}]"),
            *[("  under an assumption", f"ε = {b.epsilon:.4f} [{b.method}: {b.assumption}]") for b in self.secondary],
            ("test", self.test),
            ("observed rates", f"FPR = {fmt(lb.fpr)}, FNR = {fmt(lb.fnr)} on {lb.details.get('held_out', lb.trials):,} "
             f"held-out trials per dataset ({lb.trials:,} drawn)"),
            *_trial_rows(lb.details),
            ("tightness", fmt(self.tightness)),
            ("verdict", self.verdict.upper() if self.verdict == VIOLATION else self.verdict),
            ("seed / seconds", f"{self.seed} / {self.seconds:.2f}"),
        ]
        return key_value_table(title, rows, lb.meaning())

    def summary(self) -> str:
        """Return the audit as a plain-text table with the sentence of what the bound means."""
        return plain_text(self.table())

    def __str__(self) -> str:
        return self.summary()



def _trial_rows(details: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Return the table rows on the trials: the rounds of `trials="auto"`, a warning, how many trials would likely decide."""
    rows = []
    if "auto" in details:
        auto = details["auto"]
        rows.append(("trials auto", f"{len(auto['rounds'])} rounds, {auto['trials_drawn']:,} trials per dataset in all; "
                                    f"stopped: {auto['stopped']}"))
    if "warning" in details:
        rows.append(("warning", details["warning"]))
    if "trials_for_violation" in details:
        rows.append(("more trials", f"about {details['trials_for_violation']:,} per dataset would likely certify a "
                                    "violation at the observed rates (a projection; try --trials auto)"))
    return rows
