"""Canary scorers: from mechanism outputs to one score per (run, canary), higher meaning "member".

- `InnerProduct` (white-box): knows how a record moves the output, so it
  correlates the output with each canary's direction — the inner product of a
  released noisy sum (or mean) with the canary vector, or the released count
  of the canary's category. This is the score of Steinke, Nasr, Jagielski
  (NeurIPS 2023, arXiv 2305.08846, §6 white-box) for non-learning mechanisms.
- `OutputStatistic` (black-box): a statistic of the output alone, the same for
  every canary of a run. It suits multi-run games (one canary per run); in a
  one-run game all canaries tie, so it cannot beat chance there.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

import numpy as np
from dpaudit.attacks.canary import CATEGORY, Canaries
from dpaudit.errors import InvalidParameterError

__all__ = ["CanaryScorer", "InnerProduct", "OutputStatistic", "scorer_by_name"]

STATISTICS = ("sum", "norm", "max")


class CanaryScorer(Protocol):
    """What a canary game needs: a name and `score(outputs, canaries)` of shape (runs, canaries)."""

    name: str

    def score(self, outputs: np.ndarray, canaries: Canaries) -> np.ndarray:
        """Return the (runs, m) scores of the m canaries in each run's output."""


def _matrix(outputs: np.ndarray) -> np.ndarray:
    out = np.asarray(outputs)
    if not np.issubdtype(out.dtype, np.number):
        raise InvalidParameterError("Canary scorers need numeric mechanism outputs.")
    return out.astype(float).reshape(len(out), -1)


@dataclasses.dataclass(frozen=True)
class InnerProduct:
    """White-box: ⟨output, canary⟩ for vector canaries, the output at the canary's index for categories."""

    name: str = "inner-product"

    def score(self, outputs: np.ndarray, canaries: Canaries) -> np.ndarray:
        """Return (runs, m) scores; sound for any output, powerful when a canary shifts the output along itself.

        Inputs: the outputs, and the canary records (and OUT records) fixed
        before the game; never which canaries are in.

        Under replace-one the OUT record is subtracted: ⟨output, canary − absent⟩,
        or count[canary] − count[absent] for categories.
        """
        out = _matrix(outputs)
        if canaries.kind == CATEGORY:
            return _gather(out, canaries.records) - (
                0.0 if canaries.absent is None else _gather(out, canaries.absent))
        if canaries.records is None:
            raise InvalidParameterError(
                "The inner-product scorer needs canary records made of numbers; the pair's differing record is not "
                "(score the pair with OutputStatistic, the black-box score)."
            )
        directions = np.asarray(canaries.records, dtype=float).reshape(canaries.size, -1)
        if canaries.absent is not None:
            directions = directions - np.asarray(canaries.absent, dtype=float).reshape(canaries.size, -1)
        if directions.shape[1] != out.shape[1]:
            raise InvalidParameterError(
                f"The inner-product scorer needs outputs of the canaries' dimension {directions.shape[1]}; "
                f"got outputs with {out.shape[1]} entries."
            )
        return out @ directions.T


def _gather(out: np.ndarray, columns: np.ndarray) -> np.ndarray:
    if columns.max() >= out.shape[1]:
        raise InvalidParameterError(
            f"Category canaries go up to {int(columns.max())} but the outputs have {out.shape[1]} "
            "entries; give the mechanism more bins."
        )
    return out[:, columns]


@dataclasses.dataclass(frozen=True)
class OutputStatistic:
    """Black-box: one statistic of each run's output ("sum", "norm" or "max" of its entries), for every canary."""

    statistic: str = "sum"

    def __post_init__(self) -> None:
        if self.statistic not in STATISTICS:
            raise InvalidParameterError(
                f"The 'statistic' parameter of OutputStatistic must be one of {', '.join(STATISTICS)}; "
                f"got {self.statistic!r} instead."
            )

    @property
    def name(self) -> str:
        """Return the label used in reports."""
        return f"black-box-{self.statistic}"

    def score(self, outputs: np.ndarray, canaries: Canaries) -> np.ndarray:
        """Return (runs, m) scores: the run's statistic repeated for each of its m canaries (inputs: the outputs alone)."""
        out = _matrix(outputs)
        if self.statistic == "sum":
            stat = out.sum(axis=1)
        elif self.statistic == "norm":
            stat = np.linalg.norm(out, axis=1)
        else:
            stat = out.max(axis=1)
        return np.repeat(stat[:, None], canaries.size, axis=1)


def scorer_by_name(name: str) -> CanaryScorer:
    """Return the scorer named `name`: "inner-product" (white-box) or "black-box-{sum,norm,max}"."""
    if name in ("inner-product", "white-box"):
        return InnerProduct()
    if name.startswith("black-box"):
        return OutputStatistic(name.partition("black-box-")[2] or "sum")
    raise InvalidParameterError(
        "The scorer must be 'inner-product' (white-box) or one of "
        f"{', '.join('black-box-' + s for s in STATISTICS)}; got {name!r} instead."
    )
