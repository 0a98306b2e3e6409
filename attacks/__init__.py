"""Attacks: choose inputs, run the mechanism, reduce its outputs to evidence (`Observations` or error counts)."""

from dpaudit.attacks.observations import Observations

__all__ = ["Observations"]
