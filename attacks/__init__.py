"""Attacks: choose inputs, run the mechanism, reduce its outputs to observations."""
