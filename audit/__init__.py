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
from typing import Any

_HOMES = {
    # entry points
    "audit_mechanism": "dpaudit.audit.audits.two_dataset",
    "audit_canaries": "dpaudit.audit.audits.canaries",
    "audit_scores": "dpaudit.audit.audits.canaries",
    "audit_dpsgd": "dpaudit.audit.audits.dpsgd",
    "audit_tracing": "dpaudit.audit.audits.tracing",
    "run_suite": "dpaudit.audit.audits.suite",
    "recertify": "dpaudit.audit.audits.recertify",
    # games and what they play with
    "MultiRun": "dpaudit.attacks.games",
    "OneRun": "dpaudit.attacks.games",
    "TwoDataset": "dpaudit.attacks.games",
    "Observations": "dpaudit.attacks.observations",
    "HeldOutCounts": "dpaudit.attacks.held_out_counts",
    "OutputHistogram": "dpaudit.attacks.output_histogram",
    "InputSpace": "dpaudit.attacks.pair_search",
    "InnerProduct": "dpaudit.attacks.canary_scores",
    "OutputStatistic": "dpaudit.attacks.canary_scores",
    "AutoBudget": "dpaudit.audit.audits.auto_trials",
    "DPSGDConfig": "dpaudit.mechanisms.dpsgd.config",
    "UserTrainer": "dpaudit.mechanisms.dpsgd.user_trainer",
    # how evidence is certified
    "Bound": "dpaudit.audit.estimators.certify",
    "BestOf": "dpaudit.audit.estimators.thresholds",
    "DominatingPair": "dpaudit.audit.estimators.thresholds",
    "SimultaneousBands": "dpaudit.audit.estimators.thresholds",
    "Split": "dpaudit.audit.estimators.thresholds",
    "Bonferroni": "dpaudit.audit.estimators.thresholds",
    "TwoRates": "dpaudit.audit.estimators.intervals",
    "RatioInterval": "dpaudit.audit.estimators.intervals",
    "Bands": "dpaudit.audit.estimators.intervals",
    "LowerBound": "dpaudit.audit.estimators.lower_bound",
    "UpperBound": "dpaudit.audit.theory.upper_bound",
    # where it runs
    "Execution": "dpaudit.audit.execution.execution",
    "Backend": "dpaudit.audit.execution.backends",
    "Interrupted": "dpaudit.audit.execution.interrupted",
    "DPSGDInterrupted": "dpaudit.audit.audits.dpsgd",
    # results
    "Result": "dpaudit.audit.results.result",
    "AuditResult": "dpaudit.audit.results.result",
    "MembershipResult": "dpaudit.audit.results.result",
    "Phases": "dpaudit.audit.results.phases",
    "SuiteTable": "dpaudit.audit.audits.suite",
    "write_report": "dpaudit.audit.results.report",
}
"""Every public name of `dpaudit.audit` → the module it lives in: the one list (`__all__` is its keys)."""

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """Return the public name `name`, importing its module on first use."""
    if name not in _HOMES:
        raise AttributeError(f"module 'dpaudit.audit' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
