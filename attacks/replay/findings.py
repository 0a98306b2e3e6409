"""What a replay reports, as typed findings: a divergence, a sensitivity, a data-derived shape.

A finding is what one run on D and its replay on D′ showed; it is never a
certificate. `dpaudit.audit.audit_replay` certifies each finding it keeps
with the two-dataset audit on fresh draws, and the verdict follows the
certificate only.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["DataDerivedShape", "Divergence", "DrawShift", "Finding", "Sensitivity"]


@dataclasses.dataclass(frozen=True)
class Divergence:
    """The replay on D′ asked for other draws than the run on D: the data steers the control flow or the noise.

    Attributes:
        index: the position of the call (0 for the first draw) where the two runs part.
        kind: "method" (another method or order), "law" (another scale, probability or other argument of the law),
            "size" (another number of draws in one call) or "count" (more or fewer calls).
        recorded: the call on D in words ("" when D made none there).
        replayed: the call on D′ in words ("" when D′ made none there).
    """

    index: int
    kind: str
    recorded: str
    replayed: str

    def describe(self) -> str:
        """Return the divergence in one sentence."""
        on_d = self.recorded or "no draw"
        on_d1 = self.replayed or "no draw"
        return f"draw {self.index}: {on_d} on D but {on_d1} on D′ (another {self.kind})"

    def to_dict(self) -> dict[str, Any]:
        """Return the finding as JSON."""
        return {"finding": "divergence", **dataclasses.asdict(self), "sentence": self.describe()}


@dataclasses.dataclass(frozen=True)
class DrawShift:
    """How far the value one draw's noise is added to moved between D and D′, and the law that noise has.

    Attributes:
        index: the position of the draw.
        law: the method (laplace, normal, exponential, geometric, ...).
        scale: its scale (b of Laplace, σ of a Gaussian, 1/log(1/(1−p)) of a geometric; 0 for no noise).
        l1, l2: the L1 and L2 norms of the move of the value the noise is added to.
        where: "argument" (the primitive received it as its location) or "release" (the release minus the noise).
    """

    index: int
    law: str
    scale: float
    l1: float
    l2: float
    where: str


@dataclasses.dataclass(frozen=True)
class Sensitivity:
    """With the noise frozen, how far the release moved between D and D′, and what the recorded noise makes of it.

    Attributes:
        l1, linf: the L1 and largest move of the release (∞ when a number became NaN or ±∞, or the reverse).
        moved: the entries of the flattened release that moved, largest move first (at most 16; the aimed test's).
        shifts: each recorded draw whose value moved, with its law and scale.
        pure_epsilon: Σ move/scale over the draws of pure laws (Laplace, exponential, logistic, geometric):
            the ε those draws give this pair; ∞ for a move with no noise.
        gaussian_mu: √Σ (move/σ)² over the Gaussian draws (their μ-GDP at this pair; its ε(δ) is the exact profile).
        unpriced: the laws of moved draws that have no closed form here (gumbel, other laws), in words.
    """

    l1: float
    linf: float
    moved: tuple[int, ...]
    shifts: tuple[DrawShift, ...]
    pure_epsilon: float
    gaussian_mu: float
    unpriced: tuple[str, ...] = ()

    def describe(self) -> str:
        """Return the finding in one sentence."""
        where = sorted({s.where for s in self.shifts})
        at = f" (seen {' and '.join('in the noise argument' if w == 'argument' else 'in the release' for w in where)})"
        entries = ", ".join(map(str, self.moved[:4])) + (", …" if len(self.moved) > 4 else "")
        return (f"with the noise frozen the release moves by {self.l1:.4g} (L1), in entries {entries or 'none'}"
                + (at if where else ""))

    def to_dict(self) -> dict[str, Any]:
        """Return the finding as JSON."""
        return {"finding": "sensitivity", **dataclasses.asdict(self), "sentence": self.describe()}


@dataclasses.dataclass(frozen=True)
class DataDerivedShape:
    """The release's shape, its set of categories or labels, or its number of outputs differ between D and D′.

    Attributes:
        what: "shape", "categories" (labels, keys or the values of text outputs) or "failure" (D′ raised).
        on_d0, on_d1: what it was on D and on D′, in words.
    """

    what: str
    on_d0: str
    on_d1: str

    def describe(self) -> str:
        """Return the finding in one sentence."""
        return f"the release's {self.what} is {self.on_d0} on D but {self.on_d1} on D′"

    def to_dict(self) -> dict[str, Any]:
        """Return the finding as JSON."""
        return {"finding": "data-derived shape", **dataclasses.asdict(self), "sentence": self.describe()}


Finding = Divergence | Sensitivity | DataDerivedShape
"""Any finding of a replay."""
