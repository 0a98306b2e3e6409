"""dpaudit's one import surface: every audit, the game and bound objects, the results and the report writer.

```python
from dpaudit.audit import Bound, MultiRun, OneRun, audit_canaries, audit_mechanism
```

Names load on first use (PEP 562), so `import dpaudit.audit` costs almost
nothing and an audit loads only the libraries it needs. Where each lives:
`audits/` the entry points, `estimators/` evidence → lower bound,
`theory/` upper bounds, `execution/` where trials run, `results/` results
and reports, `cli/` the `dpaudit` command.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpaudit.attacks.games import MultiRun, OneRun
    from dpaudit.attacks.observations import Observations
    from dpaudit.audit.audits.canaries import audit_canaries, audit_scores
    from dpaudit.audit.audits.dpsgd import DPSGDInterrupted, audit_dpsgd
    from dpaudit.audit.audits.suite import SuiteTable, run_suite
    from dpaudit.audit.audits.tracing import audit_tracing
    from dpaudit.audit.audits.two_dataset import audit_mechanism
    from dpaudit.audit.estimators.certify import Bound
    from dpaudit.audit.estimators.lower_bound import LowerBound
    from dpaudit.audit.estimators.thresholds import Bonferroni, DominatingPair, Split
    from dpaudit.audit.execution.runner import Backend
    from dpaudit.audit.execution.runs import Execution
    from dpaudit.audit.results.report import write_report
    from dpaudit.audit.results.result import AuditResult, MembershipResult, Result
    from dpaudit.audit.theory.upper_bound import UpperBound
    from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
    from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

_HOMES = {
    "audit_mechanism": "dpaudit.audit.audits.two_dataset",
    "audit_canaries": "dpaudit.audit.audits.canaries",
    "audit_scores": "dpaudit.audit.audits.canaries",
    "audit_dpsgd": "dpaudit.audit.audits.dpsgd",
    "DPSGDInterrupted": "dpaudit.audit.audits.dpsgd",
    "audit_tracing": "dpaudit.audit.audits.tracing",
    "run_suite": "dpaudit.audit.audits.suite",
    "SuiteTable": "dpaudit.audit.audits.suite",
    "MultiRun": "dpaudit.attacks.games",
    "OneRun": "dpaudit.attacks.games",
    "Observations": "dpaudit.attacks.observations",
    "Bound": "dpaudit.audit.estimators.certify",
    "DominatingPair": "dpaudit.audit.estimators.thresholds",
    "Split": "dpaudit.audit.estimators.thresholds",
    "Bonferroni": "dpaudit.audit.estimators.thresholds",
    "LowerBound": "dpaudit.audit.estimators.lower_bound",
    "UpperBound": "dpaudit.audit.theory.upper_bound",
    "Backend": "dpaudit.audit.execution.runner",
    "Execution": "dpaudit.audit.execution.runs",
    "Result": "dpaudit.audit.results.result",
    "AuditResult": "dpaudit.audit.results.result",
    "MembershipResult": "dpaudit.audit.results.result",
    "write_report": "dpaudit.audit.results.report",
    "DPSGDConfig": "dpaudit.mechanisms.dpsgd.config",
    "UserTrainer": "dpaudit.mechanisms.dpsgd.user_trainer",
}

__all__ = [
    "AuditResult",
    "Backend",
    "Bonferroni",
    "Bound",
    "DPSGDConfig",
    "DPSGDInterrupted",
    "DominatingPair",
    "Execution",
    "LowerBound",
    "MembershipResult",
    "MultiRun",
    "Observations",
    "OneRun",
    "Result",
    "Split",
    "SuiteTable",
    "UpperBound",
    "UserTrainer",
    "audit_canaries",
    "audit_dpsgd",
    "audit_mechanism",
    "audit_scores",
    "audit_tracing",
    "run_suite",
    "write_report",
]


def __getattr__(name: str) -> Any:
    """Return the public name `name`, importing its module on first use."""
    if name not in _HOMES:
        raise AttributeError(f"module 'dpaudit.audit' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
