"""Entry points: each audit plays a game through the attacks and certifies its evidence through the estimators."""

__all__: list[str] = []
