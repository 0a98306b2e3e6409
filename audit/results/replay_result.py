"""The result of a replay audit (`audit_replay`): the certificate that decides the verdict, and the findings beside it.

A `ReplayResult` is an `AuditResult` (the two-dataset certificate with the
largest bound among those the replay chose, at the confidence of all of
them together) with one more field, `replay`: how many pairs were screened
and, for each pair certified, its findings, the ε they imply, where the test
was aimed and the certificate. The verdict is the certificate's alone; a
finding never decides it. JSON: the keys of an audit and `replay`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from dpaudit.attacks.replay.findings import Finding
from dpaudit.audit.results.result import AuditResult
from dpaudit.json_values import jsonable

__all__ = ["Certified", "ReplayReport", "ReplayResult"]


@dataclasses.dataclass(frozen=True)
class Certified:
    """One pair the replay chose: its kind and note, its findings, their implied ε, the aim, and its certificate.

    `implied_epsilon` is what the recorded noise makes of the move at this
    pair (a reading, not a bound; None, "not priced", when part of the move
    has no law to read it by); `result` is the two-dataset audit on fresh
    draws, certified at `share` of β.
    """

    kind: str
    note: str
    findings: tuple[Finding, ...]
    implied_epsilon: float | None
    aim: str
    share: float
    result: AuditResult

    def to_dict(self) -> dict[str, Any]:
        """Return the pair's findings and certificate as JSON."""
        lower = self.result.lower_bound
        return {"kind": self.kind, "note": self.note, "findings": [jsonable(f.to_dict()) for f in self.findings],
                "implied_epsilon": jsonable(self.implied_epsilon), "aim": self.aim, "share_of_beta": self.share,
                "lower_bound": lower.to_dict(), "verdict": self.result.verdict}


@dataclasses.dataclass(frozen=True)
class ReplayReport:
    """What the replay did: the pairs screened (two runs each), those flagged, and each pair certified.

    Attributes:
        screened: the candidate pairs replayed.
        flagged: how many of them showed a divergence, a data-derived shape, an implied ε above the claim or a move
            that is not priced.
        certified: the pairs certified on fresh draws, largest implied ε first.
        runs: the mechanism's runs spent screening (two per pair, one more where a release's move was checked
            against the noise laid under it, and one replay of the first pair's D on itself).
    """

    screened: int
    flagged: int
    certified: tuple[Certified, ...]
    runs: int

    def to_dict(self) -> dict[str, Any]:
        """Return the report as JSON."""
        return {"screened": self.screened, "flagged": self.flagged, "runs": self.runs,
                "certified": [c.to_dict() for c in self.certified]}

    def rows(self) -> list[tuple[str, str]]:
        """Return the table rows: what was screened, then each certified pair's findings and bound."""
        rows = [("replay", f"{self.screened} pair(s) screened at two runs each, {self.flagged} flagged, "
                           f"{len(self.certified)} certified on fresh draws")]
        for c in self.certified:
            rows.append((f"  {c.kind}", f"{c.note}: implied ε {_implied(c.implied_epsilon)}; test on {c.aim}; certified "
                                        f"ε = {c.result.lower_bound.epsilon:.4f} at β·{c.share:.3g}"))
            rows += [("    finding", f.describe()) for f in c.findings]
        return rows


def _implied(epsilon: float | None) -> str:
    """Return an implied ε in words: "not priced" for None, "= ∞", or "= " and its value."""
    if epsilon is None:
        return "not priced"
    return "= ∞" if math.isinf(epsilon) else f"= {epsilon:.4g}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReplayResult(AuditResult):
    """The result of `audit_replay`: the deciding certificate (an `AuditResult`) and the replay's findings in `replay`.

    It has every attribute of `AuditResult` (those of the certificate of largest bound, its confidence that of all
    the certificates together; with more than one, `evidence` is None and `selection` lists them) and this one.

    Attributes:
        replay: the pairs screened and flagged, and each pair certified with its findings and certificate.
    """

    replay: ReplayReport

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON of an audit with the key `replay` added."""
        return {**super().to_dict(), "replay": self.replay.to_dict()}

    def rows(self) -> list[tuple[str, str]]:
        """Return the audit's rows, the replay's before the verdict."""
        rows = super().rows()
        at = next(i for i, (name, _) in enumerate(rows) if name == "verdict")
        return rows[:at] + self.replay.rows() + rows[at:]
