"""Tracing scores: how strongly a release of d column statistics points at a candidate row.

Every score here is Z(y, a) = Σ_j w_j (y_j − c_j)(a_j − c_j) for a release a
(d numbers, e.g. one-way marginals), a candidate row y ∈ {±1}^d, a centre c
and weights w fixed before the release is seen:

- known biases: c = p, w = 1 (Dwork, Smith, Steinke, Ullman, Vadhan, "Robust
  Traceability from Trace Amounts", FOCS 2015, §3). A member of n rows of an
  accurate release scores about Σ_j (1 − p_j²)/n on average, a non-member 0;
- reference rows: c = the mean of r rows drawn from the population, for an
  attacker who does not know the biases (same paper, §4; r may be 1);
- Tardos' weights: c = p, w_j = 1/√(1 − p_j²), so each column's term has unit
  variance for a non-member (Tardos, "Optimal probabilistic fingerprint
  codes", STOC 2003, §2, in the symmetric form of Škorić, Katzenbeisser and
  Celik 2008, with the centred release in place of the pirate's bit).

Higher means "member". Any score fixed before the game is sound input for
the estimators; these are the strong ones for marginal releases.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_int

__all__ = ["SCORE_KINDS", "TracingScore", "known_bias_score", "reference_score", "tardos_score"]

KNOWN, REFERENCE, WEIGHTED = "known", "reference", "tardos"
SCORE_KINDS = (KNOWN, REFERENCE, WEIGHTED)
BLOCK_ENTRIES = 4_000_000
_MIN_VARIANCE = 1e-12


@dataclasses.dataclass(frozen=True, eq=False)
class TracingScore:
    """Z(y, a) = Σ_j w_j (y_j − c_j)(a_j − c_j): centre c, weights w (both length d), and a name."""

    name: str
    centre: np.ndarray
    weights: np.ndarray

    @property
    def dim(self) -> int:
        """Return d, the number of statistics a release must have."""
        return int(self.centre.size)

    def matrix(self, releases: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """Return the R × m scores of m candidate rows in each of R releases.

        Inputs: the releases, the candidate rows and the score's centre and
        weights, all fixed before the game (population biases or reference
        rows drawn apart); never which candidates are members.

        Candidates (int8 or float) are converted block by block, so m × d may be
        large (10⁴ × 10⁴ int8 rows need about 100 MB beside 32 MB blocks).
        """
        releases, candidates = self._check(releases, candidates)
        centred = (releases - self.centre).T
        out = np.empty((releases.shape[0], candidates.shape[0]))
        block = max(1, BLOCK_ENTRIES // self.dim)
        for start in range(0, candidates.shape[0], block):
            rows = candidates[start:start + block].astype(float)
            out[:, start:start + block] = (((rows - self.centre) * self.weights) @ centred).T
        return out

    def paired(self, releases: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """Return Z(candidates[i], releases[i]) for each i: one candidate per release (R of each)."""
        releases, candidates = self._check(releases, candidates)
        if releases.shape[0] != candidates.shape[0]:
            raise InvalidParameterError(
                f"Paired tracing scores need one candidate per release; got {candidates.shape[0]} candidates "
                f"and {releases.shape[0]} releases."
            )
        return np.einsum("ij,ij->i", (candidates - self.centre) * self.weights, releases - self.centre)

    def _check(self, releases: np.ndarray, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        releases = np.atleast_2d(np.asarray(releases, dtype=float))
        candidates = np.atleast_2d(np.asarray(candidates))
        for label, arr in (("releases", releases), ("candidate rows", candidates)):
            if arr.ndim != 2 or arr.shape[1] != self.dim:
                raise InvalidParameterError(
                    f"The {label} of a tracing score must have {self.dim} columns; got shape {arr.shape}."
                )
        return releases, candidates


def known_bias_score(biases: np.ndarray) -> TracingScore:
    """Return the score ⟨y − p, a − p⟩ of an attacker who knows the column biases p."""
    biases = np.asarray(biases, dtype=float).reshape(-1)
    return TracingScore(KNOWN, biases, np.ones_like(biases))


def reference_score(reference_rows: np.ndarray) -> TracingScore:
    """Return ⟨y − p̂, a − p̂⟩, p̂ the column means of r ≥ 1 reference rows from the population.

    The reference rows must be drawn independently of the game's membership
    coins (e.g. fresh rows of the same population).
    """
    rows = np.atleast_2d(np.asarray(reference_rows))
    check_int(rows.shape[0], "reference_rows", "reference_score")
    centre = rows.mean(axis=0, dtype=float)
    return TracingScore(f"{REFERENCE} (r = {rows.shape[0]})", centre, np.ones_like(centre))


def tardos_score(biases: np.ndarray) -> TracingScore:
    """Return Tardos' weighted score Σ_j (y_j − p_j)(a_j − p_j)/√(1 − p_j²) (see the module docstring)."""
    biases = np.asarray(biases, dtype=float).reshape(-1)
    return TracingScore(WEIGHTED, biases, 1.0 / np.sqrt(np.maximum(1.0 - biases ** 2, _MIN_VARIANCE)))
