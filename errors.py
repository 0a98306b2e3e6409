"""Errors dpaudit raises for bad input; each carries one sentence for the user.

They subclass `ValueError`, as Opacus and scikit-learn do, so callers that
already catch `ValueError` keep working; the CLI prints the sentence and exits 2.
"""

__all__ = ["DPAuditError", "InvalidParameterError", "MechanismError", "NeighbourAnswerError", "UnknownMechanismError"]


class DPAuditError(ValueError):
    """Base class: a user-facing error whose message is one clear sentence."""


class InvalidParameterError(DPAuditError):
    """A parameter is out of its domain (ε < 0, δ ≥ 1, trials < 1, ...)."""


class MechanismError(DPAuditError):
    """The audited mechanism raised, or returned NaN, inf or changing shapes."""


class UnknownMechanismError(DPAuditError):
    """A mechanism name or `module:attr` reference that cannot be resolved."""


class NeighbourAnswerError(InvalidParameterError, TypeError):
    """A neighbour check answered something other than True/False, None or a sentence (a `TypeError` too)."""
