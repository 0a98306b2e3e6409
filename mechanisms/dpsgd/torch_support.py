"""The optional torch dependency: one import point, one sentence when it is missing, the device to train on."""

from __future__ import annotations

import importlib
from typing import Any

from dpaudit.errors import DPAuditError

__all__ = ["default_device", "import_optional", "import_torch"]

INSTALL_HINT = "pip install torch==2.13.0 && pip install 'dpaudit[torch]'"


def import_optional(name: str, *, needed_by: str, hint: str) -> Any:
    """Return the optional module `name`, or raise a one-sentence error naming what needs it and how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise DPAuditError(f"{needed_by} need {name}, which is not installed ({hint}).") from exc


def import_torch() -> Any:
    """Return the torch module, or raise a one-sentence error saying how to install it."""
    return import_optional("torch", needed_by="DP-SGD audits", hint=INSTALL_HINT)


def default_device() -> Any:
    """Return CUDA when present, the CPU otherwise."""
    torch = import_torch()
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
