"""Mechanisms: black boxes with the privacy claim made about them, and the registry of built-ins."""

from mechanisms import canary_targets, gaussian, geometric, histogram, laplace, noisy_max, randomized_response
from mechanisms.base import Claim, Mechanism, Relation, check_pair
from mechanisms.blackbox import blackbox
from mechanisms.errors import DPAuditError, InvalidParameterError, MechanismError, UnknownMechanismError
from mechanisms.registry import get_mechanism, list_mechanisms, register

__all__ = [
    "Claim",
    "DPAuditError",
    "InvalidParameterError",
    "Mechanism",
    "MechanismError",
    "Relation",
    "UnknownMechanismError",
    "blackbox",
    "check_pair",
    "gaussian",
    "geometric",
    "get_mechanism",
    "histogram",
    "laplace",
    "list_mechanisms",
    "noisy_max",
    "randomized_response",
    "register",
]
