"""DP-SGD: the trainer, its configuration, data, models, accounting, known bugs, and the Opacus and user targets."""

__all__: list[str] = []
