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

if TYPE_CHECKING:  # the real types of the lazy names, for type checkers and editors (`name as name`: a re-export)
    from dpaudit.attacks.canary_scores import InnerProduct as InnerProduct
    from dpaudit.attacks.canary_scores import OutputStatistic as OutputStatistic
    from dpaudit.attacks.games import MultiRun as MultiRun
    from dpaudit.attacks.games import OneRun as OneRun
    from dpaudit.attacks.games import TwoDataset as TwoDataset
    from dpaudit.attacks.held_out_counts import HeldOutCounts as HeldOutCounts
    from dpaudit.attacks.observations import Observations as Observations
    from dpaudit.attacks.output_histogram import OutputHistogram as OutputHistogram
    from dpaudit.attacks.pair_search import InputSpace as InputSpace
    from dpaudit.audit.audits.auto_trials import AutoBudget as AutoBudget
    from dpaudit.audit.audits.canaries import audit_canaries as audit_canaries
    from dpaudit.audit.audits.canaries import audit_scores as audit_scores
    from dpaudit.audit.audits.dpsgd import DPSGDInterrupted as DPSGDInterrupted
    from dpaudit.audit.audits.dpsgd import audit_dpsgd as audit_dpsgd
    from dpaudit.audit.audits.recertify import recertify as recertify
    from dpaudit.audit.audits.replay import audit_replay as audit_replay
    from dpaudit.audit.audits.suite import SuiteTable as SuiteTable
    from dpaudit.audit.audits.suite import run_suite as run_suite
    from dpaudit.audit.audits.tracing import audit_tracing as audit_tracing
    from dpaudit.audit.audits.two_dataset import audit_mechanism as audit_mechanism
    from dpaudit.audit.estimators.certify import Bound as Bound
    from dpaudit.audit.estimators.intervals import Bands as Bands
    from dpaudit.audit.estimators.intervals import RatioInterval as RatioInterval
    from dpaudit.audit.estimators.intervals import TwoRates as TwoRates
    from dpaudit.audit.estimators.lower_bound import LowerBound as LowerBound
    from dpaudit.audit.estimators.thresholds import BestOf as BestOf
    from dpaudit.audit.estimators.thresholds import Bonferroni as Bonferroni
    from dpaudit.audit.estimators.thresholds import DominatingPair as DominatingPair
    from dpaudit.audit.estimators.thresholds import SimultaneousBands as SimultaneousBands
    from dpaudit.audit.estimators.thresholds import Split as Split
    from dpaudit.audit.results.phases import Phases as Phases
    from dpaudit.audit.results.replay_result import ReplayResult as ReplayResult
    from dpaudit.audit.results.report import write_report as write_report
    from dpaudit.audit.results.result import AuditResult as AuditResult
    from dpaudit.audit.results.result import MembershipResult as MembershipResult
    from dpaudit.audit.results.result import Result as Result
    from dpaudit.audit.theory.upper_bound import UpperBound as UpperBound
    from dpaudit.execution.backends import Backend as Backend
    from dpaudit.execution.execution import Execution as Execution
    from dpaudit.execution.interrupted import Interrupted as Interrupted
    from dpaudit.mechanisms.dpsgd.config import DPSGDConfig as DPSGDConfig
    from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer as UserTrainer

_SECTIONS: dict[str, dict[str, str]] = {
    "Entry points": {  # in the order of the guides
        "audit_mechanism": "dpaudit.audit.audits.two_dataset",
        "run_suite": "dpaudit.audit.audits.suite",
        "audit_canaries": "dpaudit.audit.audits.canaries",
        "audit_scores": "dpaudit.audit.audits.canaries",
        "audit_tracing": "dpaudit.audit.audits.tracing",
        "audit_dpsgd": "dpaudit.audit.audits.dpsgd",
        "audit_replay": "dpaudit.audit.audits.replay",
        "recertify": "dpaudit.audit.audits.recertify",
    },
    "Results": {
        "Result": "dpaudit.audit.results.result",
        "AuditResult": "dpaudit.audit.results.result",
        "MembershipResult": "dpaudit.audit.results.result",
        "ReplayResult": "dpaudit.audit.results.replay_result",
        "Phases": "dpaudit.audit.results.phases",
        "SuiteTable": "dpaudit.audit.audits.suite",
        "write_report": "dpaudit.audit.results.report",
    },
    "Games and what they play with": {
        "TwoDataset": "dpaudit.attacks.games",
        "MultiRun": "dpaudit.attacks.games",
        "OneRun": "dpaudit.attacks.games",
        "InputSpace": "dpaudit.attacks.pair_search",
        "InnerProduct": "dpaudit.attacks.canary_scores",
        "OutputStatistic": "dpaudit.attacks.canary_scores",
        "AutoBudget": "dpaudit.audit.audits.auto_trials",
        "DPSGDConfig": "dpaudit.mechanisms.dpsgd.config",
        "UserTrainer": "dpaudit.mechanisms.dpsgd.user_trainer",
    },
    "Evidence": {
        "HeldOutCounts": "dpaudit.attacks.held_out_counts",
        "OutputHistogram": "dpaudit.attacks.output_histogram",
        "Observations": "dpaudit.attacks.observations",
    },
    "How evidence is certified": {
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
    },
    "Where it runs": {
        "Execution": "dpaudit.execution.execution",
        "Backend": "dpaudit.execution.backends",
        "Interrupted": "dpaudit.execution.interrupted",
        "DPSGDInterrupted": "dpaudit.audit.audits.dpsgd",
    },
}
"""Every public name of `dpaudit.audit` → the module it lives in, by section in the order of the API page: the one list."""

_HOMES = {name: home for names in _SECTIONS.values() for name, home in names.items()}
"""Every public name → its module (`__all__` is its keys)."""

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
