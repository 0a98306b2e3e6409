"""One-run estimators: bounds from one run with many canaries, each in with probability 1/2."""

__all__: list[str] = []
