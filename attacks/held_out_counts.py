"""The evidence of a two-dataset game: the errors of a test fixed before the outputs it judges were drawn."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from dpaudit.attacks.distinguish import DistinguishingTest
from dpaudit.attacks.sampling import draw_checked
from dpaudit.mechanisms.base import Mechanism

__all__ = ["CountRejections", "HeldOutCounts"]


@dataclasses.dataclass(frozen=True)
class HeldOutCounts:
    """Errors of one fixed test "reject = guess d1" on fresh outputs of the neighbouring pair (d0, d1).

    `false_positives` of the `n0` outputs on d0 were rejected, and
    `false_negatives` of the `n1` outputs on d1 were not. The test (and, for
    the ratio interval, the `direction` the rates are compared in: 0 or 1)
    was chosen on other outputs, so the counts are binomial (Poisson when
    n0, n1 are themselves Poisson) with the test's true rates.
    """

    false_positives: int
    n0: int
    false_negatives: int
    n1: int
    direction: int | None = None

    @classmethod
    def from_rejections(cls, counts: np.ndarray, *, direction: int | None = None) -> HeldOutCounts:
        """Return the evidence of runner counts [d0 rejections, d1 rejections, d0 outputs, d1 outputs]."""
        n0, n1 = int(counts[2]), int(counts[3])
        return cls(int(counts[0]), n0, n1 - int(counts[1]), n1, direction)

    @property
    def fpr(self) -> float:
        """The observed false-positive rate (0 without outputs)."""
        return self.false_positives / max(self.n0, 1)

    @property
    def fnr(self) -> float:
        """The observed false-negative rate (0 without outputs)."""
        return self.false_negatives / max(self.n1, 1)

    def facts(self) -> dict[str, Any]:
        """Return the counts as the audit's JSON reports them."""
        return {"held_out_d0": self.n0, "held_out_d1": self.n1, "false_positives": self.false_positives,
                "false_negatives": self.false_negatives,
                "interval": "two-rates" if self.direction is None else "ratio"}


@dataclasses.dataclass(frozen=True)
class CountRejections:
    """A chunk's work: draw Poisson(size) outputs on each of d0 and d1 and count where `test` guesses D1.

    Outputs of another `shape` than the selection's stop the audit (`MechanismError`).

    Returns [rejections among d0 outputs, rejections among d1 outputs,
    outputs drawn on d0, outputs drawn on d1] (`HeldOutCounts.from_rejections`).
    """

    mechanism: Mechanism
    d0: Any
    d1: Any
    test: DistinguishingTest
    shape: tuple[int, ...]

    def __call__(self, size: int, seed: np.random.SeedSequence) -> np.ndarray:
        out0, out1 = draw_checked(self.mechanism, self.d0, self.d1, size, seed, self.shape)
        rejected = [np.count_nonzero(self.test.rejects(out)) if len(out) else 0 for out in (out0, out1)]
        return np.array([*rejected, len(out0), len(out1)], dtype=np.int64)
