"""Estimators, theory bounds, reports, runner and CLI: where mechanisms and attacks meet."""

from audit.result import AuditResult
from audit.two_dataset import audit_mechanism

__all__ = ["AuditResult", "audit_mechanism"]
