"""Estimators, theory bounds, reports, runner and CLI: where mechanisms and attacks meet."""

from dpaudit.audit.result import AuditResult
from dpaudit.audit.two_dataset import audit_mechanism

__all__ = ["AuditResult", "audit_mechanism"]
