"""Observations: canary scores with the membership truth they are to guess.

Every canary (or every run of a membership game) gives one real score, and
higher means "member": IN for a canary game, D1 for a two-dataset test.
`truth` says which canaries really were IN. Attacks produce Observations;
estimators turn them into ε lower bounds. They are saved as JSON or `.npz`
(never pickle), so scores from a user's own pipeline can be audited.
"""

from __future__ import annotations

import dataclasses
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_real

__all__ = ["Observations"]

_FORMAT = "dpaudit-observations"


@dataclasses.dataclass(frozen=True, eq=False)
class Observations:
    """Scores (float, higher = "member"/"D1") and truth (bool, True = member/IN), one per canary.

    Both arrays are one-dimensional, of the same non-zero length, and stored
    read-only; scores must not be NaN (±inf are allowed: they order like any
    other score, e.g. a score that is a log-likelihood ratio of 0 or 1).

    `beta_share` is the share of β a certificate of these scores may spend:
    1 for scores whose game and direction were fixed before they were seen;
    for the arm an audit kept among several, each certified at its share
    (a ladder's best canary), that share, which travels with the saved scores
    so that auditing them again pays for the choice again.
    """

    scores: np.ndarray
    truth: np.ndarray
    beta_share: float = 1.0

    def __post_init__(self) -> None:
        scores = _as_scores(self.scores)
        truth = _as_truth(self.truth)
        if scores.size == 0:
            raise InvalidParameterError("Observations need at least one score.")
        if scores.shape != truth.shape:
            raise InvalidParameterError(
                f"Observations need one truth value per score; got {scores.size} scores "
                f"and {truth.size} truth values."
            )
        if np.any(np.isnan(scores)):
            raise InvalidParameterError(
                f"Observations need scores that are numbers; got {int(np.sum(np.isnan(scores)))} "
                "NaN values (they cannot be ordered against the others)."
            )
        check_real(self.beta_share, "beta_share", "Observations", low=0.0, high=1.0, low_open=True)
        scores.setflags(write=False)
        truth.setflags(write=False)
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "truth", truth)

    @classmethod
    def from_in_out(cls, in_scores: Any, out_scores: Any) -> Observations:
        """Return Observations holding the IN canaries' scores first, then the OUT ones (one-dimensional each)."""
        in_scores, out_scores = _as_scores(in_scores), _as_scores(out_scores)
        truth = np.concatenate([np.ones(in_scores.size, bool), np.zeros(out_scores.size, bool)])
        return cls(scores=np.concatenate([in_scores, out_scores]), truth=truth)

    @property
    def size(self) -> int:
        """Return the number of canaries (scores)."""
        return int(self.scores.size)

    @property
    def n_in(self) -> int:
        """Return the number of IN (member) canaries."""
        return int(np.count_nonzero(self.truth))

    @property
    def n_out(self) -> int:
        """Return the number of OUT (non-member) canaries."""
        return self.size - self.n_in

    @property
    def in_scores(self) -> np.ndarray:
        """Return the scores of the IN canaries."""
        return self.scores[self.truth]

    @property
    def out_scores(self) -> np.ndarray:
        """Return the scores of the OUT canaries."""
        return self.scores[~self.truth]

    def tpr_at(self, fpr: float) -> float:
        """Return the fraction of IN scores above the (1 − fpr) quantile of the OUT scores (nan without both).

        A descriptive number of the attack (true-positive rate at the given
        false-positive rate, ties counted as negatives), not a bound.
        """
        fpr = check_real(fpr, "fpr", "Observations.tpr_at", low=0.0, high=1.0)
        if self.n_in == 0 or self.n_out == 0:
            return float("nan")
        threshold = np.quantile(self.out_scores, 1.0 - fpr, method="higher")
        return float(np.mean(self.in_scores > threshold))

    def require_both_classes(self, owner: str) -> None:
        """Raise InvalidParameterError unless there is at least one IN and one OUT canary."""
        if self.n_in == 0 or self.n_out == 0:
            raise InvalidParameterError(
                f"{owner} needs both IN and OUT canaries; got {self.n_in} IN and "
                f"{self.n_out} OUT."
            )

    def split(self, rng: np.random.Generator, fraction: float) -> tuple[Observations, Observations]:
        """Return (selection, estimation): a random split, stratified by truth.

        About `fraction` of the IN and of the OUT canaries go to the selection
        part (used to choose a test), the rest to the estimation part (used to
        bound its error rates), so the two parts are independent given the
        truth.
        """
        fraction = check_real(fraction, "fraction", "Observations.split", low=0.0, high=1.0,
                              low_open=True, high_open=True)
        chosen = np.zeros(self.size, dtype=bool)
        for members in (np.flatnonzero(self.truth), np.flatnonzero(~self.truth)):
            take = int(round(fraction * members.size))
            chosen[rng.permutation(members)[:take]] = True
        return self._subset(chosen), self._subset(~chosen)

    def _subset(self, mask: np.ndarray) -> Observations:
        if not mask.any():
            raise InvalidParameterError(
                f"Splitting {self.size} observations left one part empty; use more canaries "
                "or a fraction nearer 1/2."
            )
        return Observations(scores=self.scores[mask], truth=self.truth[mask], beta_share=self.beta_share)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready form: format tag, scores and truth as lists (and `beta_share` when below 1)."""
        shared = {"beta_share": self.beta_share} if self.beta_share < 1 else {}
        return {"format": _FORMAT, "version": 1, "scores": self.scores.tolist(),
                "truth": self.truth.tolist(), **shared}

    @classmethod
    def from_dict(cls, data: Any) -> Observations:
        """Return Observations from `to_dict()`'s form (a mapping with 'scores' and 'truth')."""
        if not isinstance(data, dict) or "scores" not in data or "truth" not in data:
            raise InvalidParameterError(
                "Observations data must be a JSON object with 'scores' and 'truth' lists."
            )
        return cls(scores=data["scores"], truth=data["truth"], beta_share=data.get("beta_share", 1.0))

    def save(self, path: str | Path) -> Path:
        """Write the observations to `path` (.json or .npz, by suffix); return the path."""
        path = Path(path)
        suffix = _suffix(path)
        if suffix == ".json":
            path.write_text(json.dumps(self.to_dict()))
        else:
            shared = {"beta_share": np.float64(self.beta_share)} if self.beta_share < 1 else {}
            np.savez(path, scores=self.scores, truth=self.truth, **shared)
        return path

    @staticmethod
    def check_path(path: str | Path) -> Path:
        """Return `path` if observations can be saved there (.json or .npz, in an existing folder); else raise one sentence."""
        path = Path(path)
        _suffix(path)
        if not path.parent.is_dir():
            raise InvalidParameterError(f"Cannot save observations to '{path}': the folder '{path.parent}' does not exist.")
        return path

    @classmethod
    def load(cls, path: str | Path) -> Observations:
        """Return the observations stored at `path` (.json or .npz, by suffix), never unpickling."""
        path = Path(path)
        suffix = _suffix(path)
        if not path.is_file():
            raise InvalidParameterError(f"No observations file at '{path}'.")
        if suffix == ".json":
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as err:
                raise InvalidParameterError(f"'{path}' is not valid JSON ({err.msg}).") from None
            except UnicodeDecodeError:
                raise InvalidParameterError(f"'{path}' is not valid JSON (it is not UTF-8 text).") from None
            return cls.from_dict(data)
        try:
            with np.load(path, allow_pickle=False) as data:
                scores, truth = data["scores"], data["truth"]
                share = float(data["beta_share"]) if "beta_share" in data.files else 1.0
        except (KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile):
            raise InvalidParameterError(
                f"'{path}' is not an .npz file with 'scores' and 'truth' arrays (or it is truncated)."
            ) from None
        return cls(scores=scores, truth=truth, beta_share=share)


def _as_scores(values: Any) -> np.ndarray:
    try:
        arr = np.array(values, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError("Observations need numeric scores.") from None
    if arr.ndim > 1:
        raise InvalidParameterError(
            f"Observations need a one-dimensional array of scores; got shape {arr.shape}."
        )
    return arr.reshape(-1)


def _as_truth(values: Any) -> np.ndarray:
    arr = np.array(values)
    if arr.ndim > 1:
        raise InvalidParameterError(
            f"Observations need a one-dimensional array of truth values; got shape {arr.shape}."
        )
    arr = arr.reshape(-1)
    if arr.dtype == bool:
        return arr.copy()
    if arr.size and not (np.issubdtype(arr.dtype, np.number) and np.all((arr == 0) | (arr == 1))):
        raise InvalidParameterError(
            "Observations need truth values that are booleans or 0/1; got other values."
        )
    return arr.astype(bool)


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in (".json", ".npz"):
        raise InvalidParameterError(
            f"Observations are saved as .json or .npz; got the file name '{path.name}'."
        )
    return suffix
