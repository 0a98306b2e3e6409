"""`dataset="auto"`: screen the candidate datasets of a user's loop on runs of their own, then audit the best one.

Each candidate dataset (`candidate_datasets`: the canaries alone, a few
rows, adversarial rows, the user's data) is played with its ladder of
canaries on SCREEN_FRACTION of the audit's runs (at least MIN_SCREEN),
each run seeded by child (SCREEN_STREAM, d, i) of the audit's seed, and
every (dataset, canary) arm is ranked by the entry point's `ArmJudge`
(the audit's: μ̂ = √2·Φ⁻¹(AUC) of its scores). With one round, μ̂ of some
ten arms on a few hundred runs each is noisy enough (standard error near
0.14) that the highest is often a weak arm's lucky draw; so, as in
successive halving (Jamieson and Talwalkar, AISTATS 2016), the FINALISTS
datasets whose best arm ranks highest play RESCREEN times as many runs
again (children (SCREEN_STREAM, d, RESCREEN_ROUND, i)), and their arms are
ranked on all their screening runs. The arm ranked highest is the one the
audit plays, alone, on the full runs, whose seeds (RUN_STREAM, i) and
membership draws are fresh. The choice reads only the screening runs,
independent of the game's, so the game's bound keeps its full confidence:
this is the "screening phase on separate runs" way to pay for a choice (no
union bound needed). Each arm's screening bound (alone, at the audit's
confidence) is reported so that a miss says what was tried; none of them
is the verdict. What ranks and bounds an arm comes down from the entry
point: the game never imports the audit layer.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

import numpy as np
from dpaudit.attacks.dpsgd.audit_datasets import AuditDataset
from dpaudit.attacks.dpsgd.game import SCREEN_STREAM, DPSGDGame
from dpaudit.attacks.dpsgd.runs import multi_run
from dpaudit.attacks.observations import Observations
from dpaudit.errors import MechanismError
from dpaudit.execution.execution import Execution
from dpaudit.execution.run_store import RunStore
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig

__all__ = ["MIN_SCREEN", "SCREEN_FRACTION", "ArmJudge", "Screening", "screen"]

StoreOf = Callable[[int, AuditDataset, int, int], Optional[RunStore]]
"""Where candidate d's screening runs of a stage (0, or RESCREEN_ROUND: a finalist's) go: `store_of(d, candidate, runs, stage)`."""
SCREEN_FRACTION = 0.2
MIN_SCREEN = 10
FINALISTS = 2
RESCREEN = 2
RESCREEN_ROUND = 1


@dataclasses.dataclass(frozen=True)
class ArmJudge:
    """How screening ranks the (dataset, canary) arms and what it reports of each, handed down by the entry point.

    `rank(obs)` returns an arm's rank from its screening scores, higher for
    an arm expected to certify more (the audit's: μ̂ = √2·Φ⁻¹(AUC));
    `epsilon(obs, rng)` returns the ε lower bound that the arm's screening
    scores certify alone, drawing from `rng` if the estimator draws. Each
    only steers the choice or describes it: the verdict is certified on the
    game's fresh runs.
    """

    rank: Callable[[Observations], float]
    epsilon: Callable[[Observations, np.random.Generator], float]


@dataclasses.dataclass(frozen=True)
class Screening:
    """What screening chose (a dataset and its canary `arm`), what every arm gave (the report's rows) and the datasets
    on which the loop failed (`failed`: "label: why")."""

    dataset: AuditDataset
    arm: int
    arms: tuple[dict[str, Any], ...]
    failed: tuple[str, ...] = ()


def screen_runs(runs: int) -> int:
    """Return the screening runs of each candidate dataset for an audit of `runs` runs."""
    return max(MIN_SCREEN, int(runs * SCREEN_FRACTION))


def screen(candidates: list[AuditDataset], *, config: DPSGDConfig, threat: str, scorer: str, runs: int,
           game_rng: np.random.Generator, estimator_rng: np.random.Generator, seed: int, execution: Execution,
           judge: ArmJudge, store_of: StoreOf = lambda d, candidate, runs, stage: None) -> Screening:
    """Return the finalists' (dataset, canary) arm of highest `judge.rank`, with each arm's rank and screening bound
    (`judge.epsilon`, drawing from `estimator_rng`).

    Inputs: the candidates (fixed before any run), screening runs of their
    own seeds, membership drawn from `game_rng`. Sound for the game that
    follows whatever it returns: its runs and membership are drawn afresh.
    `store_of(d, candidate, runs, stage)`: where candidate d's screening runs
    of a stage are saved as they finish (None: nowhere), so that a resumed
    audit replays none.
    """
    count = screen_runs(runs)

    def play(d: int, stage: int, runs: int) -> tuple[Observations, ...]:
        candidate = candidates[d]
        game = DPSGDGame(config, candidate.trainer, candidate.canaries, None, threat, scorer)
        stream = (SCREEN_STREAM, d) + ((stage,) if stage else ())
        played = multi_run(game, runs, game_rng, seed, store_of(d, candidate, runs, stage), execution, stream=stream,
                           label=f"screening {candidate.key}" + (" (finalist)" if stage else ""))
        return played if isinstance(played, tuple) else (played,)

    arms, failed = {}, []
    for d in range(len(candidates)):
        _play_or_drop(lambda: play(d, 0, count), d, candidates, arms, failed)
    if not arms:
        raise MechanismError(f"The loop failed on every dataset screened: {'; '.join(failed)}")
    finalists = sorted(arms, key=lambda d: -max(judge.rank(obs) for obs in arms[d]))[:FINALISTS]
    for d in finalists if len(arms) > 1 else ():
        first = arms[d]
        _play_or_drop(lambda: tuple(map(_pooled, first, play(d, RESCREEN_ROUND, RESCREEN * count))), d, candidates,
                      arms, failed)
    finalists = [d for d in finalists if d in arms] or list(arms)
    rows, best = [], (-np.inf, 0, 0)
    for d, candidate in enumerate(candidates):
        for j, obs in enumerate(arms.get(d, ())):
            mu = judge.rank(obs)
            epsilon = judge.epsilon(obs, estimator_rng)
            rows.append({"dataset": candidate.label, "canary": j, **_magnitude(candidate, j), "screening_runs": obs.size,
                         "screening_mu": round(mu, 4), "screening_epsilon": round(epsilon, 4)})
            if d in finalists and mu > best[0]:
                best = (mu, d, j)
    return Screening(candidates[best[1]], best[2], tuple(rows), tuple(failed))


def _play_or_drop(play: Callable[[], tuple[Observations, ...]], d: int, candidates: list[AuditDataset],
                  arms: dict[int, tuple[Observations, ...]], failed: list[str]) -> None:
    """Set `arms[d]` to what `play` returns; when the loop fails on candidate d (a run raises), drop it and say why.

    A loop may fail on a dataset only now and then (an empty Poisson batch
    on a few rows), after the probe runs passed; the auditor's other
    datasets still stand.
    """
    try:
        arms[d] = play()
    except MechanismError as error:
        arms.pop(d, None)
        failed.append(f"{candidates[d].label}: {error}")


def _pooled(first: Observations, second: Observations) -> Observations:
    """Return the scores of both rounds of one arm as one sample."""
    return Observations(np.concatenate([first.scores, second.scores]), np.concatenate([first.truth, second.truth]))


def _magnitude(candidate: AuditDataset, arm: int) -> dict[str, float]:
    magnitudes = candidate.canaries.magnitudes
    return {} if magnitudes is None else {"magnitude": float(magnitudes[arm])}
