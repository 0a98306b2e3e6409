"""Mechanisms: black boxes with the privacy claim made about them, and the registry of built-ins."""

# Importing the modules registers their mechanisms.
from dpaudit.mechanisms import (  # noqa: F401
    canary_targets,
    floating_point,
    gaussian,
    geometric,
    histogram,
    laplace,
    marginals,
    marginals_buggy,
    noise,
    noisy_hist,
    noisy_max,
    opendp_adapters,
    pipelinedp_adapters,
    private_selection,
    pydp_adapters,
    randomized_response,
    sparse_vector,
    statistics,
    transforms,
)
from dpaudit.mechanisms.base import Claim, Mechanism, Relation, check_pair
from dpaudit.mechanisms.blackbox import blackbox
from dpaudit.mechanisms.errors import DPAuditError, InvalidParameterError, MechanismError, UnknownMechanismError
from dpaudit.mechanisms.registry import get_mechanism, list_mechanisms, register

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
    "get_mechanism",
    "list_mechanisms",
    "register",
]
