"""DP-SGD games: canaries, training runs with or without them, and their scores."""

__all__: list[str] = []
