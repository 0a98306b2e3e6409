"""Screening a user's datasets reads what ranks and bounds an arm from the judge the entry point hands down, nothing else."""

import importlib
import sys
from pathlib import Path

import numpy as np
from dpaudit.attacks.dpsgd.audit_datasets import candidate_datasets
from dpaudit.attacks.dpsgd.canaries import CRAFTED, QUIET
from dpaudit.attacks.dpsgd.screening import FINALISTS, RESCREEN, ArmJudge, screen, screen_runs
from dpaudit.execution.execution import Execution
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

sys.path.insert(0, str(Path(__file__).parents[3] / "docs" / "examples"))
loops = importlib.import_module("numpy_dpsgd")
SIGMA, RATE, STEPS = 2.0, 0.1, 2


def test_the_chosen_arm_is_the_finalists_highest_by_the_judges_rank_and_each_row_its_bound():
    event = poisson_event(SIGMA, RATE, STEPS)
    digits = load_data("digits")
    target = UserTrainer(train=loops.make_train(sigma=SIGMA, rate=RATE, steps=STEPS, lr=0.5, batch=180.0),
                         losses=loops.losses, x=digits.x, y=digits.y, claim=Claim(pld_epsilon(event, 1e-5), 1e-5),
                         event=event)
    candidates = list(candidate_datasets(target, CRAFTED, np.random.default_rng(0), dirac_target=QUIET).datasets)
    estimator_rng, given = np.random.default_rng(1), []

    def reversed_gap(obs):  # the reverse of what an audit ranks by: the others' mean score less the members'
        return float(np.mean(obs.scores[~obs.truth]) - np.mean(obs.scores[obs.truth]))

    def epsilon(obs, rng):
        given.append(rng)
        return obs.size / 1000

    found = screen(candidates, config=DPSGDConfig(), threat="white-box", scorer="loss", runs=10,
                   game_rng=np.random.default_rng(2), estimator_rng=estimator_rng, seed=0, execution=Execution(),
                   judge=ArmJudge(rank=reversed_gap, epsilon=epsilon))
    finalists = [row for row in found.arms if row["screening_runs"] == (1 + RESCREEN) * screen_runs(10)]
    assert len({row["dataset"] for row in finalists}) == FINALISTS
    chosen = [row for row in finalists if (row["dataset"], row["canary"]) == (found.dataset.label, found.arm)]
    assert len(chosen) == 1 and chosen[0]["screening_mu"] == max(row["screening_mu"] for row in finalists)
    assert [row["screening_epsilon"] for row in found.arms] == [round(row["screening_runs"] / 1000, 4) for row in found.arms]
    assert len(given) == len(found.arms) and all(rng is estimator_rng for rng in given)
