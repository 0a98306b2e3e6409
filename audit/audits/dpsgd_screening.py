"""`dataset="auto"`: screen the candidate datasets of a user's loop on runs of their own, then audit the best one.

Each candidate dataset (`candidate_datasets`: the canaries alone, a few
rows, adversarial rows, the user's data) is played with its ladder of
canaries on SCREEN_FRACTION of the audit's runs (at least MIN_SCREEN),
each run seeded by child (SCREEN_STREAM, d, i) of the audit's seed, and
every (dataset, canary) arm is scored by the AUC of its scores (μ̂ =
√2·Φ⁻¹(AUC)). The arm with the highest μ̂ is the one the audit plays,
alone, on the full runs, whose seeds (RUN_STREAM, i) and membership draws
are fresh. The choice reads only the screening runs, independent of the
game's, so the game's bound keeps its full confidence: this is the
"screening phase on separate runs" way to pay for a choice (no union bound
needed). Each arm's screening bound (alone, at the audit's confidence) is
reported so that a miss says what was tried; none of them is the verdict.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

import numpy as np
from dpaudit.attacks.dpsgd.audit_datasets import AuditDataset
from dpaudit.attacks.dpsgd.game import SCREEN_STREAM, DPSGDGame
from dpaudit.attacks.games import MultiRun
from dpaudit.audit.audits.dpsgd_runs import multi_run
from dpaudit.audit.estimators.certify import Bound, certify
from dpaudit.audit.estimators.projected_runs import auc_mu
from dpaudit.audit.execution.execution import Execution
from dpaudit.audit.execution.run_store import RunStore
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig

__all__ = ["MIN_SCREEN", "SCREEN_FRACTION", "Screening", "screen"]

StoreOf = Callable[[int, AuditDataset, int], Optional[RunStore]]
"""Where candidate d's screening runs are saved: `store_of(d, candidate, runs)`."""
SCREEN_FRACTION = 0.2
MIN_SCREEN = 10


@dataclasses.dataclass(frozen=True)
class Screening:
    """What screening chose (a dataset and its canary `arm`) and what every arm gave (the report's rows)."""

    dataset: AuditDataset
    arm: int
    arms: tuple[dict[str, Any], ...]


def screen_runs(runs: int) -> int:
    """Return the screening runs of each candidate dataset for an audit of `runs` runs."""
    return max(MIN_SCREEN, int(runs * SCREEN_FRACTION))


def screen(candidates: list[AuditDataset], *, config: DPSGDConfig, threat: str, scorer: str, runs: int,
           game_rng: np.random.Generator, estimator_rng: np.random.Generator, seed: int, execution: Execution,
           bound: Bound, delta: float, store_of: StoreOf = lambda d, candidate, runs: None) -> Screening:
    """Return the (dataset, canary) arm of highest screening μ̂, with each arm's μ̂ and screening bound.

    Inputs: the candidates (fixed before any run), screening runs of their
    own seeds, membership drawn from `game_rng`. Sound for the game that
    follows whatever it returns: its runs and membership are drawn afresh.
    `store_of(d, candidate, runs)`: where candidate d's screening runs are
    saved as they finish (None: nowhere), so that a resumed audit replays none.
    """
    count = screen_runs(runs)
    rows, best = [], (-np.inf, 0, 0)
    for d, candidate in enumerate(candidates):
        game = DPSGDGame(config, candidate.trainer, candidate.canaries, None, threat, scorer)
        played = multi_run(game, count, game_rng, seed, store_of(d, candidate, count), execution, stream=(SCREEN_STREAM, d),
                           label=f"screening {candidate.key}")
        for j, obs in enumerate(played if isinstance(played, tuple) else (played,)):
            mu = auc_mu(obs)
            lower = certify(obs, MultiRun(count), bound, delta=delta, rng=estimator_rng)
            rows.append({"dataset": candidate.label, "canary": j, **_magnitude(candidate, j), "screening_runs": count,
                         "screening_mu": round(mu, 4), "screening_epsilon": round(lower.epsilon, 4)})
            if mu > best[0]:
                best = (mu, d, j)
    return Screening(candidates[best[1]], best[2], tuple(rows))


def _magnitude(candidate: AuditDataset, arm: int) -> dict[str, float]:
    magnitudes = candidate.canaries.magnitudes
    return {} if magnitudes is None else {"magnitude": float(magnitudes[arm])}
