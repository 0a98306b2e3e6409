"""Estimators, theory bounds, reports, runner and CLI: where mechanisms and attacks meet."""

from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.results.result import AuditResult

__all__ = ["AuditResult", "audit_mechanism"]
