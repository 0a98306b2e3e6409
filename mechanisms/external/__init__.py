"""Mechanisms whose outputs come from another process: a command in any language, or Python in another environment.

The protocol and the process handling live in `processes`; the worker that serves a Python function of another
environment is a standalone script (`mechanisms/scripts/external_worker.py`), run by that environment's interpreter.
"""

from dpaudit.mechanisms.external.processes import (
    DEFAULT_TIMEOUT,
    SEED_BOUND,
    ExternalMechanism,
    ExternalProcess,
    external,
    external_python,
    unit_sum_pair,
)

__all__ = ["DEFAULT_TIMEOUT", "SEED_BOUND", "ExternalMechanism", "ExternalProcess", "external", "external_python", "unit_sum_pair"]
