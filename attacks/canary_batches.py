"""The multi-run canary game played in batches of runs, as a sequential audit asks for them: the same canary in every batch.

`CanaryBatches.play(start, count)` plays runs start … start + count − 1 of
the game `multi_run_observations` plays in one go: the canary is made from
the same data seed in every batch, each batch's memberships and runs come
from a stream of its own (child `start` of the game's seed), drawn before
its runs and independently of them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from dpaudit.attacks.canary_design import multi_run_observations
from dpaudit.attacks.canary_scores import CanaryScorer
from dpaudit.attacks.observations import Observations
from dpaudit.mechanisms.base import Mechanism

__all__ = ["CanaryBatches"]


@dataclasses.dataclass
class CanaryBatches:
    """A multi-run canary game in `mode` (`canary_design.CANARY_MODES`), its seeds fixed before any run; `chosen` is
    the scorer the game plays, known once a batch is played."""

    mech: Mechanism
    mode: str
    scorer: CanaryScorer | None
    dim: int | None
    norm: float | None
    canary_seed: int
    game_seed: int
    mapper: Any
    chosen: CanaryScorer | None = None

    def play(self, start: int, count: int) -> Observations:
        """Return the scores and membership of runs `start` … `start + count − 1` (each in with probability ½)."""
        canary_rng = np.random.default_rng(self.canary_seed)
        game_rng = np.random.default_rng(np.random.SeedSequence([self.game_seed, start]))
        obs, self.chosen = multi_run_observations(self.mech, self.mode, count, self.scorer, self.dim, self.norm,
                                                  canary_rng, game_rng, self.mapper)
        return obs

    def scorer_name(self) -> str:
        """Return the name of the scorer played (the one given before any batch)."""
        chosen = self.chosen or self.scorer
        return "" if chosen is None else chosen.name
