"""Tracing (fingerprinting-code) games: the population, the game and the tracing scores."""

__all__: list[str] = []
