"""Mechanisms: black boxes with the privacy claim made about them, and the registry of built-ins."""

from dpaudit.errors import DPAuditError, InvalidParameterError, MechanismError, UnknownMechanismError
from dpaudit.mechanisms.base import Claim, Mechanism, Relation, check_pair
from dpaudit.mechanisms.blackbox import blackbox
from dpaudit.mechanisms.records import BoxRecords, CategoryRecords, VectorRecords
from dpaudit.mechanisms.registry import get_mechanism, list_mechanisms, register

__all__ = [
    "BoxRecords",
    "CategoryRecords",
    "Claim",
    "DPAuditError",
    "InvalidParameterError",
    "Mechanism",
    "MechanismError",
    "Relation",
    "UnknownMechanismError",
    "VectorRecords",
    "blackbox",
    "check_pair",
    "get_mechanism",
    "list_mechanisms",
    "register",
]
