"""The one-run game: m canaries, each in independently with probability 1/2, one run, every canary scored.

Steinke, Nasr, Jagielski, "Privacy Auditing with One (1) Training Run",
NeurIPS 2023, arXiv 2305.08846, Algorithm 1. The mechanism is run once on
the dataset holding the included canaries (and, under replace-one, the
`absent` records in the slots of the others); the scorer gives each canary
one score from that single output. The game returns `Observations`; the
one-run estimators (`dpaudit.audit.estimators.one_run.binomial`, `one_run.fdp`) turn them into
a bound, which is valid because the inclusions are independent fair coins
drawn here, before the run.
"""

from __future__ import annotations

import numpy as np
from dpaudit.attacks.canary import REMEDY, CanarySet, require_neighbours
from dpaudit.attacks.canary_scores import CanaryScorer
from dpaudit.attacks.observations import Observations
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Mechanism

__all__ = ["one_run_game"]


def one_run_game(
    mech: Mechanism, canaries: CanarySet, *, scorer: CanaryScorer, rng: np.random.Generator, remedy: str = REMEDY,
) -> Observations:
    """Return the scores of all m canaries after one run, with truth[i] = canary i was included.

    The inclusions are independent Bernoulli(1/2) draws from `rng`, as the
    one-run theorem requires (SNJ 2023, Thm 3.1); before the run, every
    canary's dataset with it and without it (the others as drawn) is
    checked to be neighbours for `mech` (`require_neighbours`, refused
    naming `remedy`); the output is one call `mech.sample(dataset, 1, rng)`.
    """
    if canaries.size < 2:
        raise InvalidParameterError(f"A one-run game needs at least 2 canaries; got {canaries.size}.")
    included = rng.random(canaries.size) < 0.5
    require_neighbours(mech, canaries, included, remedy=remedy)
    output = mech.sample(canaries.dataset(included), 1, rng)
    return Observations(scores=scorer.score(output, canaries)[0], truth=included)
