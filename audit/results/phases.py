"""What a two-dataset audit's phases did: typed facts for its report, merged into the JSON's `lower_bound`."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["AutoRounds", "Epoch", "Phases", "Round", "SequentialEpochs"]


@dataclasses.dataclass(frozen=True)
class Round:
    """One round of `trials="auto"`: its trials per dataset, seed, bound and the confidence it was paid."""

    trials: int
    seed: int
    epsilon: float
    confidence: float


@dataclasses.dataclass(frozen=True)
class AutoRounds:
    """The rounds of `trials="auto"`, why they stopped, and the budget they had."""

    rounds: tuple[Round, ...]
    stopped: str
    max_trials: int
    max_seconds: float | None
    tight: float

    @property
    def trials_drawn(self) -> int:
        """Return the trials per dataset drawn over all rounds."""
        return sum(r.trials for r in self.rounds)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON `auto` object."""
        return {"rounds": [dataclasses.asdict(r) for r in self.rounds], "trials_drawn": self.trials_drawn,
                "stopped": self.stopped, "max_trials": self.max_trials, "max_seconds": self.max_seconds,
                "tight": self.tight}


@dataclasses.dataclass(frozen=True)
class Epoch:
    """One epoch of `trials="sequential"`: a test chosen on `selection` fresh outputs, then `held_out` outputs judged
    by confidence sequences (and the last epoch's planned look) at `confidence` (its share of β); its seed, its running
    bound, the test in words, and `planned_look`, the bound of the last epoch's look at its complete held-out draws
    (None for another epoch, or one stopped before them)."""

    selection: int
    held_out: int
    seed: int
    epsilon: float
    confidence: float
    test: str
    planned_look: float | None = None


@dataclasses.dataclass(frozen=True)
class SequentialEpochs:
    """The epochs of `trials="sequential"`, why they stopped, the budget and stop rules they had, and (`default`) why
    the audit played them when given no trials (`default_trials`: its draws are expensive), or None when asked to."""

    epochs: tuple[Epoch, ...]
    stopped: str
    max_trials: int
    max_seconds: float | None
    tight: float
    give_up: bool
    default: str | None = None

    @property
    def trials_drawn(self) -> int:
        """Return the trials per dataset drawn over all epochs (selection and held-out; the held-out ones are Poisson)."""
        return sum(e.selection + e.held_out for e in self.epochs)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON `sequential` object."""
        out = {"epochs": [dataclasses.asdict(e) for e in self.epochs], "trials_drawn": self.trials_drawn,
               "stopped": self.stopped, "max_trials": self.max_trials, "max_seconds": self.max_seconds,
               "tight": self.tight, "give_up": self.give_up}
        return out if self.default is None else {**out, "default": self.default}


@dataclasses.dataclass(frozen=True)
class Phases:
    """The phases of one two-dataset audit.

    Attributes:
        test: the test chosen, as the report names it.
        interval: how its rates were certified ("two-rates", "ratio" or "bands").
        selection: outputs per dataset spent choosing it (screening included; 0 for bands).
        held_out: outputs per dataset expected in the held-out phase (every output for bands).
        screening: the outputs that screened wide outputs and the coordinates kept, or None.
        pair_search: the trials the pair search spent and the pair it chose, or None.
        warning: a sentence for the user (e.g. the mechanism draws from a global generator), or None.
        interrupted: True when Ctrl-C or a time limit stopped the held-out phase.
        trials_for_violation: the projected trials per dataset that would likely certify a violation, or None.
        auto: the rounds of `trials="auto"`, or None.
        sequential: the epochs of `trials="sequential"`, or None.
    """

    test: str
    interval: str
    selection: int
    held_out: int
    screening: dict[str, Any] | None = None
    pair_search: dict[str, Any] | None = None
    warning: str | None = None
    interrupted: bool = False
    trials_for_violation: int | None = None
    auto: AutoRounds | None = None
    sequential: SequentialEpochs | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the facts as the JSON's `lower_bound` object holds them (absent ones left out)."""
        out: dict[str, Any] = {"held_out": self.held_out, "selection": self.selection}
        optional = {"pair_search": self.pair_search, "screening": self.screening, "interrupted": self.interrupted or None,
                    "warning": self.warning, "trials_for_violation": self.trials_for_violation,
                    "auto": None if self.auto is None else self.auto.to_dict(),
                    "sequential": None if self.sequential is None else self.sequential.to_dict()}
        return {**out, **{key: value for key, value in optional.items() if value is not None}}
