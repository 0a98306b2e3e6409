"""dataset="auto" for a user's loop (screened datasets, the best one audited) and the GDP bound reported beside the verdict's."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.screening import FINALISTS, RESCREEN, screen_runs
from dpaudit.attacks.games import MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.dpsgd import audit_dpsgd
from dpaudit.audit.audits.membership import Played, run_membership_audit
from dpaudit.audit.audits.subject import Subject
from dpaudit.audit.estimators.certify import Bound
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).parents[3] / "docs" / "examples"))
loops = importlib.import_module("numpy_dpsgd")
DIGITS = load_data("digits")
SIGMA, RATE, LR = 2.0, 0.1, 0.5


def _target(steps, batch=None, stated=False):
    event = poisson_event(SIGMA, RATE, steps)
    settings = dict(clip_norm=1.0, noise_multiplier=SIGMA, sample_rate=RATE, learning_rate=LR, batch_size=batch) \
        if stated else {}
    train = loops.make_train(sigma=SIGMA, rate=RATE, steps=steps, lr=LR, batch=batch)
    return UserTrainer(train=train, losses=loops.losses, x=DIGITS.x, y=DIGITS.y,
                       claim=Claim(pld_epsilon(event, 1e-5), 1e-5), event=event, **settings)


def test_auto_names_the_dataset_it_audited_and_what_every_screened_arm_gave():
    result = audit_dpsgd(target=_target(steps=5, batch=180.0), threat="white-box", canary="crafted", runs=30, seed=0)
    attack = result.attack
    assert attack["datasets_played"][0] == "the canaries alone" and len(attack["datasets_played"]) == 5
    assert attack["dataset"] in attack["datasets_played"]
    assert len(attack["screening"]) == 4 * 3 + 1  # every dataset with its ladder of three canaries; batch-adversarial: one
    runs = {row["dataset"]: row["screening_runs"] for row in attack["screening"]}
    finalists = [d for d, n in runs.items() if n == (1 + RESCREEN) * screen_runs(30)]
    assert len(finalists) == FINALISTS and attack["dataset"] in finalists
    assert sorted(runs.values()).count(screen_runs(30)) == len(runs) - FINALISTS
    assert len(attack["canary_magnitudes"]) == 1 and "best of" not in result.lower_bound.method
    assert result.beside is not None and result.beside.assumption is not None
    assert "screening 13" in dict(result.rows())


def test_a_dataset_the_loop_fails_on_after_its_probe_runs_is_dropped_from_screening_and_named():
    train, calls = loops.make_train(sigma=SIGMA, rate=RATE, steps=3, lr=LR, batch=180.0), []

    def fails_on_few_rows_after_two_calls(x, y, rng):  # the probe's two runs pass, screening's fail
        calls.append(len(y))
        if len(y) <= 3 and calls.count(len(y)) > 2:
            raise ValueError("an empty batch")
        return train(x, y, rng)

    event = poisson_event(SIGMA, RATE, 3)
    target = UserTrainer(train=fails_on_few_rows_after_two_calls, losses=loops.losses, x=DIGITS.x, y=DIGITS.y,
                         claim=Claim(pld_epsilon(event, 1e-5), 1e-5), event=event)
    attack = audit_dpsgd(target=target, threat="white-box", canary="crafted", runs=20, seed=0).attack
    failed = attack["screening_failed"]
    assert [text.split(":")[0] for text in failed] == ["the canaries alone", "2 of the user's 1797 rows (drawn from the seed)"]
    assert "an empty batch" in failed[0] and attack["dataset"] not in [text.split(":")[0] for text in failed]
    assert {row["dataset"] for row in attack["screening"]}.isdisjoint(text.split(":")[0] for text in failed)


def test_a_loop_that_divides_by_q_n_on_no_rows_has_the_canaries_alone_named_in_screening_failed():
    attack = audit_dpsgd(target=_target(steps=2), threat="white-box", canary="crafted", runs=10, seed=0).attack
    assert "the canaries alone" not in attack["datasets_played"]
    failed = [text for text in attack["screening_failed"] if text.startswith("the canaries alone: ")]
    assert len(failed) == 1 and "non-finite parameters on 0 rows" in failed[0] and "empty dataset" in failed[0]


def test_a_named_dataset_is_not_screened_and_a_one_run_game_trains_on_the_users_data():
    named = audit_dpsgd(target=_target(steps=3), threat="white-box", canary="crafted", runs=10, dataset=20, seed=0)
    assert "screening" not in named.attack and named.attack["dataset"].startswith("20 of the user's")
    one = audit_dpsgd(target=_target(steps=3), threat="white-box", canary="crafted", game=OneRun(10), seed=0)
    assert one.attack["dataset"].startswith("the user's data") and one.beside is None


def _grid_play(mu: float, n: int):
    q = norm.ppf((np.arange(n) + 0.5) / n)
    obs = Observations(np.concatenate([q + mu, q]), np.concatenate([np.ones(n, bool), np.zeros(n, bool)]))
    return lambda data_rng, game_rng: Played(obs, "grid")


def test_the_gdp_bound_is_reported_beside_and_never_decides_the_verdict():
    subject = Subject("grid", {}, Claim(3.0, 1e-5))
    result = run_membership_audit(owner="test", game=MultiRun(200), bound=Bound(), seed=0, subject=subject,
                                  play=_grid_play(2.0, 100), beside="gdp")
    assert result.verdict == "consistent" and result.lower_bound.epsilon < 3.0
    assert result.beside.epsilon > 3.0 and result.beside_verdict == "violation under the GDP assumption"
    assert result.projected_runs > 200
    assert result.to_dict()["beside"]["verdict"] == "violation under the GDP assumption"
    assumed = run_membership_audit(owner="test", game=MultiRun(200), bound=Bound(estimator="gdp"), seed=0,
                                   subject=subject, play=_grid_play(2.0, 100), beside="gdp")
    assert assumed.beside is None and assumed.verdict == "violation-under-assumption"


CORRECT_LOOPS = {
    "divides by q·n": dict(),
    "divides by a fixed batch size": dict(batch=180.0),
    "divides by q·n, settings stated": dict(stated=True),
    "divides by a fixed batch size, settings stated": dict(batch=180.0, stated=True),
}


@pytest.mark.slow
@pytest.mark.parametrize("loop", list(CORRECT_LOOPS))
def test_correct_loops_are_not_flagged_over_20_seeds_at_auto(loop):
    target = _target(steps=20, **CORRECT_LOOPS[loop])
    verdicts = [audit_dpsgd(target=target, threat="white-box", canary="crafted", runs=60, seed=seed).verdict
                for seed in range(20)]
    assert verdicts.count("violation") == 0, verdicts


def test_screening_runs_are_saved_and_a_resumed_audit_replays_none_of_them(tmp_path):
    import json

    from dpaudit.execution.execution import Execution
    from dpaudit.execution.interrupted import Interrupted

    target, runs = _target(steps=3, batch=180.0), 50
    done = []

    def ctrl_c_after_20_runs(n):
        done.append(n)
        if sum(done) >= 20:
            raise KeyboardInterrupt

    def audit(folder, **execution):
        run = audit_dpsgd(target=target, threat="white-box", canary="crafted", runs=runs, seed=1,
                          execution=Execution(store=tmp_path / folder, **execution)).to_dict()
        run.pop("seconds")
        return run

    whole = audit("whole")
    with pytest.raises(Interrupted):
        audit("cut", progress=ctrl_c_after_20_runs)
    assert not (tmp_path / "cut" / "runs.jsonl").exists()
    kept = {path.parent.name: path.read_text() for path in (tmp_path / "cut").glob("screening-*/runs.jsonl")}
    assert sum(text.count("\n") for text in kept.values()) >= 20
    assert audit("cut", resume=True) == whole
    for part, text in kept.items():
        now = (tmp_path / "cut" / part / "runs.jsonl").read_text()
        indices = [json.loads(line)["run"] for line in now.splitlines()]
        stage_runs = screen_runs(runs) * (RESCREEN if part.count("-") == 2 else 1)
        assert now.startswith(text) and sorted(indices) == list(range(stage_runs))
