"""The games an audit can play, as small frozen objects: the two membership games and the two-dataset game.

`MultiRun(runs)`: R independent runs of the mechanism, each with or without
the canary (Jagielski, Ullman, Oprea, NeurIPS 2020; Nasr et al., IEEE S&P
2021): one score per run. `OneRun(canaries)`: one run with m canaries, each
in independently with probability 1/2 (Steinke, Nasr, Jagielski, NeurIPS
2023): one score per canary, and the auditor guesses IN for the k+ highest
and OUT for the k− lowest. Every membership audit (canaries, saved scores,
DP-SGD, tracing) takes one of them as `game=`; the estimator that certifies
its evidence is chosen by `dpaudit.audit.estimators.certify`.
"""

from __future__ import annotations

import dataclasses

from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_int

__all__ = ["DEFAULT_CANARIES", "DEFAULT_RUNS", "MIN_RUNS", "SEQUENTIAL", "TRAINING_CANARIES", "TRAINING_RUNS", "Game",
           "MultiRun", "OneRun", "TwoDataset", "game_from_name"]

DEFAULT_RUNS = 10_000
"""The runs of a multi-run game by default, on every entry point whose runs are draws of a mechanism (canaries,
tracing, in Python and on the command line)."""
TRAINING_RUNS = 200
"""The runs by default where each run trains a model (`audit_dpsgd`, `dpaudit dpsgd`): a run costs a training."""
DEFAULT_CANARIES = 1000
"""The canaries m of a one-run game by default, wherever the audit does not choose them itself."""
TRAINING_CANARIES = 100
"""The canaries m of a one-run game by default where the run trains a model: each needs a coordinate or an input of
its own among the model's few hundred parameters."""
MIN_RUNS = 10
"""The fewest runs any multi-run game accepts: below, no estimator certifies anything at a usual confidence."""
SEQUENTIAL = "sequential"
"""The value of a game's size (`--runs sequential`, as `--trials sequential`) that asks for it to be played sequentially."""


@dataclasses.dataclass(frozen=True)
class MultiRun:
    """R independent runs, each with the canary with probability ½ (a fair coin per run, drawn before the run).

    dpaudit's DP-SGD game with one canary fixes ⌊R/2⌋ of the runs by a
    seeded permutation instead; either way a run's membership is decided
    before it is played, independently of its outcome.

    Attributes:
        runs: the number R of runs (at least MIN_RUNS; DEFAULT_RUNS by default); with `sequential`, the most runs played.
        sequential: play the runs in epochs and look at an anytime-valid bound after every batch, stopping at a
            certified violation, when the claim is out of reach, or after `runs` (`audit.audits.sequential_runs`).
        give_up: with `sequential`, stop once the claim is out of reach within `runs` (False: play on to the budget).
    """

    runs: int = DEFAULT_RUNS
    sequential: bool = False
    give_up: bool = True
    name = "multi-run"

    def __post_init__(self) -> None:
        check_int(self.runs, "runs", "MultiRun", low=MIN_RUNS)
        for name in ("sequential", "give_up"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidParameterError(f"The '{name}' parameter of MultiRun must be True or False; got {getattr(self, name)!r}.")


@dataclasses.dataclass(frozen=True)
class OneRun:
    """One run with m canaries, each in independently with probability 1/2.

    Attributes:
        canaries: m; None lets the audit choose (tracing: every distinct row).
        guesses: (k+, k−), the number of IN and OUT guesses, fixed before the
            scores are seen; None tries the estimators' default rules and pays
            for them (weighted Bonferroni or the joint test).
    """

    canaries: int | None = DEFAULT_CANARIES
    guesses: tuple[int, int] | None = None
    name = "one-run"

    def __post_init__(self) -> None:
        if self.canaries is not None:
            check_int(self.canaries, "canaries", "OneRun", low=2)
        if self.guesses is not None:
            if len(self.guesses) != 2:
                raise InvalidParameterError(f"The 'guesses' parameter of OneRun must be a pair (k+, k−); got {self.guesses!r}.")
            plus, minus = (check_int(k, name, "OneRun", low=0) for k, name in zip(self.guesses, ("k+", "k−")))
            if plus + minus == 0:
                raise InvalidParameterError("The 'guesses' parameter of OneRun must make at least one guess; got (0, 0).")
            object.__setattr__(self, "guesses", (plus, minus))

    @classmethod
    def with_guesses(cls, canaries: int | None, k_plus: int | None, k_minus: int | None) -> OneRun:
        """Return the game with guesses (k+, k−) when either is given (the other 0), else the default rules."""
        guesses = None if k_plus is None and k_minus is None else (k_plus or 0, k_minus or 0)
        return cls(canaries, guesses=guesses)


@dataclasses.dataclass(frozen=True)
class TwoDataset:
    """Outputs of the mechanism on two neighbouring datasets, `trials` on each, and a test telling them apart.

    The two-dataset audit (`audit_mechanism`) plays it: a test chosen on
    some outputs, its errors counted on fresh ones (or every output counted
    and bounded by bands), its evidence certified by `certify`.

    Attributes:
        trials: outputs drawn from each dataset (at least 10).
    """

    trials: int = 1_000_000
    name = "two-dataset"

    def __post_init__(self) -> None:
        check_int(self.trials, "trials", "TwoDataset", low=10)


Game = MultiRun | OneRun | TwoDataset
"""Any game: the two membership games, or the two-dataset game."""


def game_from_name(name: str) -> type[MultiRun] | type[OneRun] | type[TwoDataset]:
    """Return the game class called `name` ("multi-run", "one-run" or "two-dataset")."""
    for game in (MultiRun, OneRun, TwoDataset):
        if game.name == name:
            return game
    raise InvalidParameterError(
        f"The game must be '{MultiRun.name}', '{OneRun.name}' or '{TwoDataset.name}'; got {name!r} instead."
    )
