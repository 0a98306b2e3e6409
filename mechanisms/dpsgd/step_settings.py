"""The settings of a DP-SGD step as its code states them: what turns an update back into a noisy gradient sum."""

from __future__ import annotations

import dataclasses

from dpaudit.validation import check_real

__all__ = ["StepSettings"]


@dataclasses.dataclass(frozen=True)
class StepSettings:
    """θ_{t+1} = θ_t − lr·(Σ clip_C(g_i) + N(0, σ²C²I)) / B, with B the expected batch q·n (Opacus' normalisation).

    Attributes:
        clip_norm: C.
        noise_multiplier: σ.
        sample_rate: q, each example's chance to be in a step's batch.
        learning_rate: lr.
        batch: B; None: q·n, with n the rows of the data the audit trains on, canaries not
            counted (fixed before the game: a normaliser that counts a run's canaries would
            read its membership).
    """

    clip_norm: float
    noise_multiplier: float
    sample_rate: float
    learning_rate: float
    batch: float | None = None

    def __post_init__(self) -> None:
        for name in ("clip_norm", "noise_multiplier", "learning_rate"):
            check_real(getattr(self, name), name, "StepSettings", low=0.0, low_open=True)
        check_real(self.sample_rate, "sample_rate", "StepSettings", low=0.0, high=1.0, low_open=True)
        if self.batch is not None:
            check_real(self.batch, "batch", "StepSettings", low=0.0, low_open=True)

    def sum_scale(self, rows: int) -> float:
        """Return B/lr, the factor turning an update θ_t − θ_{t+1} into the step's noisy gradient sum.

        `rows` is n of the data the audit trains on, fixed before the game
        (at least 1, so that the canaries alone still give a scale).
        """
        batch = self.sample_rate * max(rows, 1) if self.batch is None else self.batch
        return batch / self.learning_rate
