"""Tracing as a membership game: slots that hold a candidate row or a fresh row, scored by a tracing score.

The data are n rows of ±1 drawn from column biases (`tracing.data`). Some
rows are slots: slot i holds candidate row x_i when the candidate is a member
and, when it is not, a fresh row x'_i of the same population (replace-one:
the dataset keeps n rows) or nothing (add-remove). The release a = M(data) is
scored against each candidate by a `TracingScore`; the game returns the
existing `Observations` (scores, membership truth), so the canary estimators
bound ε — never a formula of their own.

- Multi-run (one slot, many releases): with `fresh_data=False` the other
  n − 1 rows, x and x' are drawn once, so the game is the canary game on two
  neighbouring datasets (`membership_game`), releases drawn in vectorized
  batches; with `fresh_data=True` every run draws all n rows again (the
  population setting of Dwork, Smith, Steinke, Ullman, Vadhan, FOCS 2015),
  one mechanism call per run (`fresh_canary_game`). Runs are independent and
  each one's two outcomes are neighbouring datasets, so the threshold and GDP
  estimators apply (Jagielski, Ullman, Oprea, NeurIPS 2020).
- One-run (m slots of one release, each a fair coin): Steinke, Nasr,
  Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023,
  Algorithm 1 (`one_run_game`); the coins are drawn before the release.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from dpaudit.attacks.canary import RECORD, CanarySet, Mapper, fresh_canary_game, in_process, membership_game
from dpaudit.attacks.observations import Observations
from dpaudit.attacks.one_run_game import one_run_game
from dpaudit.attacks.tracing.data import sample_rows
from dpaudit.attacks.tracing.scores import TracingScore
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Mechanism, Relation
from dpaudit.validation import check_int

__all__ = ["TracingScorer", "tracing_game"]

REMEDY = "tracing plays datasets of n rows of ±1; audit a mechanism whose claim covers such datasets"


@dataclasses.dataclass(frozen=True, eq=False)
class TracingScorer:
    """A canary scorer that scores each canary record with a tracing score (higher = member)."""

    tracing: TracingScore

    @property
    def name(self) -> str:
        """Return the label used in reports."""
        return f"tracing ({self.tracing.name})"

    def score(self, outputs: np.ndarray, canaries: CanarySet) -> np.ndarray:
        """Return the (runs, m) tracing scores of the m candidate rows in each release."""
        releases = np.asarray(outputs, dtype=float).reshape(len(outputs), -1)
        return self.tracing.matrix(releases, canaries.records)


def _tracing_slots(biases: np.ndarray, *, rows: int, slots: int, relation: Relation,
                  rng: np.random.Generator) -> CanarySet:
    """Return `slots` candidate rows and the data around them: n − slots base rows, and fresh rows for OUT slots.

    Under replace-one an OUT slot holds a fresh row of the population, so the
    dataset always has `rows` rows; under add-remove it is left out.

    Raises:
        InvalidParameterError: unless 1 ≤ slots ≤ rows.
    """
    rows = check_int(rows, "rows", "_tracing_slots")
    slots = check_int(slots, "slots", "_tracing_slots")
    if slots > rows:
        raise InvalidParameterError(f"A tracing game cannot have more slots ({slots}) than rows ({rows}).")
    candidates = sample_rows(biases, slots, rng)
    base = sample_rows(biases, rows - slots, rng)
    absent = sample_rows(biases, slots, rng) if relation is Relation.REPLACE_ONE else None
    return CanarySet(RECORD, candidates, base, absent)


def tracing_game(
    mech: Mechanism, biases: np.ndarray, *, rows: int, score: TracingScore, rng: np.random.Generator,
    runs: int | None = None, slots: int | None = None, fresh_data: bool = False, mapper: Mapper = in_process,
) -> Observations:
    """Return the Observations of a tracing game on `mech` (multi-run with `runs`, one-run with `slots`).

    Args:
        mech: the mechanism; it is given n × d int8 matrices of ±1.
        biases: the population's d column biases.
        rows: n, the number of rows of each dataset (under replace-one).
        score: the tracing score; it must be fixed independently of the game's coins.
        rng: the random stream (data, coins and the mechanism's noise).
        runs: multi-run: the number of releases, each with one slot.
        slots: one-run: the number m of slots in the single release.
        fresh_data: multi-run only: draw all rows again for every run.
        mapper: what plays the multi-run game's chunks of runs (`dpaudit.attacks.canary.Mapper`; one-run: one release, here).

    Raises:
        InvalidParameterError: unless exactly one of `runs` and `slots` is given.
    """
    if (runs is None) == (slots is None):
        raise InvalidParameterError("A tracing game takes either runs (multi-run) or slots (one-run), not both.")
    scorer = TracingScorer(score)
    relation = mech.claim.relation
    if slots is not None:
        canaries = _tracing_slots(biases, rows=rows, slots=slots, relation=relation, rng=rng)
        return one_run_game(mech, canaries, scorer=scorer, rng=rng, remedy=REMEDY)
    if fresh_data:
        def make(stream: np.random.Generator) -> CanarySet:
            return _tracing_slots(biases, rows=rows, slots=1, relation=relation, rng=stream)
        return fresh_canary_game(mech, make, runs=runs, scorer=scorer, rng=rng, remedy=REMEDY, mapper=mapper)
    canary = _tracing_slots(biases, rows=rows, slots=1, relation=relation, rng=rng)
    return membership_game(mech, canary, runs=runs, scorer=scorer, rng=rng, remedy=REMEDY, mapper=mapper)
