"""The models DP-SGD trains here: multinomial logistic regression and a small MLP (torch)."""

from __future__ import annotations

from typing import Any

from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.dpsgd.torch_support import import_torch

__all__ = ["MODELS", "make_model"]

LOGREG, MLP = "logreg", "mlp"
MODELS = (LOGREG, MLP)
MLP_HIDDEN = 32


def make_model(name: str, *, features: int, classes: int) -> Any:
    """Return an untrained `torch.nn.Module`: "logreg" (one linear layer) or "mlp" (features-32-classes, tanh)."""
    nn = import_torch().nn
    if name == LOGREG:
        return nn.Linear(features, classes)
    if name == MLP:
        return nn.Sequential(nn.Linear(features, MLP_HIDDEN), nn.Tanh(), nn.Linear(MLP_HIDDEN, classes))
    raise InvalidParameterError(f"The model must be one of {', '.join(MODELS)}; got {name!r} instead.")
