"""The optional torch dependency: one import point, one sentence when it is missing, the device to train on."""

from __future__ import annotations

from typing import Any

from dpaudit.mechanisms.errors import DPAuditError

INSTALL_HINT = "pip install torch==2.13.0 && pip install 'dpaudit[torch]'"


def import_torch() -> Any:
    """Return the torch module, or raise a one-sentence error saying how to install it."""
    try:
        import torch
    except ImportError as exc:
        raise DPAuditError(f"DP-SGD audits need torch, which is not installed ({INSTALL_HINT}).") from exc
    return torch


def default_device() -> Any:
    """Return CUDA when present, the CPU otherwise."""
    torch = import_torch()
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
