"""`audit_canaries(mech, game=MultiRun(runs, sequential=True))`: the multi-run canary game played sequentially.

The canary, its mode and scorer are those of the fixed game
(`canary_design.multi_run_observations`); the runs come in batches
(`canary_batches.CanaryBatches`) and are judged by `sequential_runs`.
"""

from __future__ import annotations

from typing import Any

from dpaudit.attacks.canary import both_directions
from dpaudit.attacks.canary_batches import CanaryBatches
from dpaudit.attacks.canary_scores import CanaryScorer
from dpaudit.attacks.games import MultiRun
from dpaudit.audit.audits.membership import seed_streams
from dpaudit.audit.audits.sequential_runs import check_sequential_bound, play_sequentially
from dpaudit.audit.audits.subject import Subject
from dpaudit.audit.estimators.certify import Bound
from dpaudit.audit.results.result import MembershipResult
from dpaudit.execution.execution import Execution
from dpaudit.mechanisms.base import Mechanism
from dpaudit.validation import check_int

__all__ = ["audit_canaries_sequentially"]

SEED_BOUND = 2**63


def audit_canaries_sequentially(mech: Mechanism, *, game: MultiRun, bound: Bound, canary: str,
                                scorer: CanaryScorer | None, dim: int | None, norm: float | None, seed: int,
                                execution: Execution, subject: Subject, mapper: Any) -> MembershipResult:
    """Return the sequential canary audit of `mech`: at most `game.runs` runs, its bound valid whenever it stopped.

    The canary comes from the audit's data stream and every batch's runs
    from a child of its game stream (`seed_streams`), both fixed before any
    run; sound as `sequential_runs.play_sequentially` is. The look planned at
    the full budget certifies both directions, as the fixed game does.

    Raises:
        InvalidParameterError: on bad input (one sentence), before any run.
        Interrupted: on Ctrl-C, with the result so far as `partial`.
    """
    check_sequential_bound(bound)
    seed = check_int(seed, "seed", "audit_canaries", low=0)
    data_rng, game_rng, _ = seed_streams(seed)
    batches = CanaryBatches(mech, canary, scorer, dim, norm, int(data_rng.integers(SEED_BOUND)),
                            int(game_rng.integers(SEED_BOUND)), mapper)
    return play_sequentially(owner="audit_canaries", game=game, bound=bound, seed=seed, subject=subject,
                             play=batches.play, scorer=batches.scorer_name, attack={}, execution=execution,
                             arms=both_directions)
