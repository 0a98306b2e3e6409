"""`trials="sequential"`: false violations under continuous monitoring, a blatant bug caught early, its report and refusals."""

import json

import numpy as np
import pytest
from dpaudit.audit import Bound, audit_mechanism, recertify
from dpaudit.audit.audits.auto_trials import AutoBudget
from dpaudit.audit.audits.sequential_trials import FINAL_SHARE, LAST_LOOK_SHARE, epoch_shares, planned_epochs
from dpaudit.errors import InvalidParameterError
from dpaudit.execution.interrupted import Interrupted
from dpaudit.mechanisms import blackbox, get_mechanism
from scipy.stats import binom

BETA = 0.05


def _false_violations(name: str, seeds: range, max_trials: int) -> int:
    """Return how many of the seeds' sequential audits of an exactly tight mechanism certified a violation.

    `give_up=False`: each audit watches its bound until the budget and stops
    only at the first certified violation, the most chances to be wrong.
    """
    mech = get_mechanism(name)
    budget = AutoBudget(max_trials=max_trials, give_up=False)
    return sum(audit_mechanism(mech, trials="sequential", seed=s, confidence=1 - BETA, budget=budget).verdict == "violation"
               for s in seeds)


@pytest.mark.parametrize("name", ["geometric", "randomized_response"])
def test_exactly_tight_mechanisms_are_flagged_at_most_beta_of_the_time_under_continuous_monitoring(name):
    seeds = range(20)
    assert _false_violations(name, seeds, 20_000) <= binom.ppf(0.999, len(seeds), BETA)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["geometric", "randomized_response"])
def test_exactly_tight_mechanisms_over_200_seeds(name):
    seeds = range(200)
    assert _false_violations(name, seeds, 200_000) <= binom.ppf(0.999, len(seeds), BETA)


def _laplace_with_a_tenth_of_its_noise(data, rng, size=None):
    return float(np.sum(data)) + rng.laplace(0.0, 0.1, size)


@pytest.mark.parametrize("seed", range(5))
def test_a_blatant_bug_is_certified_within_a_few_hundred_draws(seed):
    mech = blackbox(_laplace_with_a_tenth_of_its_noise, epsilon=1.0, null_record=0.0, name="laplace-tenth-noise")
    res = audit_mechanism(mech, [0.0], [1.0], trials="sequential", seed=seed)
    assert res.verdict == "violation"
    assert res.phases.sequential.stopped == "violation certified"
    assert res.phases.sequential.trials_drawn <= 1000  # the first epoch: 333 choose, the held-out looks of 32, 48, …


def test_on_a_correct_mechanism_the_bound_at_the_full_budget_is_near_the_fixed_one():
    mech = get_mechanism("laplace")
    fixed = audit_mechanism(mech, trials=200_000, seed=3).lower_bound.epsilon
    res = audit_mechanism(mech, trials="sequential", seed=3, budget=AutoBudget(max_trials=200_000, give_up=False))
    assert res.phases.sequential.stopped == "budget of trials"
    assert res.phases.sequential.trials_drawn <= 200_000 * 1.01  # Poisson held-out counts
    assert 0.9 * fixed <= res.lower_bound.epsilon <= 1.0


def test_the_epochs_and_shares_are_planned_within_the_budget():
    assert planned_epochs(1_000_000) == [1000, 4000, 16000, 64000, 915_000]
    assert planned_epochs(3000) == [3000]
    assert epoch_shares(5) == (0.0625,) * 4 + (FINAL_SHARE,) and epoch_shares(1) == (1.0 - LAST_LOOK_SHARE,)
    assert sum(epoch_shares(5)) + LAST_LOOK_SHARE == pytest.approx(1.0)


def test_the_json_lists_the_epochs_and_recertify_refuses():
    res = audit_mechanism(get_mechanism("laplace"), trials="sequential", seed=0, budget=AutoBudget(max_trials=20_000))
    out = json.loads(json.dumps(res.to_dict()))
    lower = out["lower_bound"]
    assert lower["method"] == "beta-binomial mixture confidence sequences"
    assert lower["sequential"]["epochs"] and lower["sequential"]["stopped"]
    assert sum(e["confidence"] < 1 for e in lower["sequential"]["epochs"]) == len(lower["sequential"]["epochs"])
    assert {"held_out_d0", "false_positives", "fpr_upper", "fnr_upper"} <= set(lower)
    with pytest.raises(InvalidParameterError, match="sequential"):
        recertify(res, Bound(confidence=0.9))


@pytest.mark.parametrize("interval", ["ratio", "bands"])
def test_other_intervals_are_refused_in_one_sentence(interval):
    with pytest.raises(InvalidParameterError, match="two-rates"):
        audit_mechanism(get_mechanism("laplace"), trials="sequential", interval=interval)


def test_ctrl_c_returns_the_bound_so_far():
    calls = []

    def stops_on_the_twentieth_call(data, rng, size=None):
        calls.append(1)
        if len(calls) == 20:
            raise KeyboardInterrupt
        return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)

    mech = blackbox(stops_on_the_twentieth_call, epsilon=1.0, null_record=0.0, name="stops")
    with pytest.raises(Interrupted) as stop:
        audit_mechanism(mech, [0.0], [1.0], trials="sequential", seed=0)
    partial = stop.value.partial
    assert partial is not None and partial.phases.sequential.stopped == "interrupted"
    assert 0.0 <= partial.lower_bound.epsilon <= 1.0 and partial.lower_bound.trials == stop.value.done


@pytest.mark.parametrize("budget", [300, 999])
def test_a_budget_under_the_first_epoch_is_one_epoch_within_it(budget):
    res = audit_mechanism(get_mechanism("laplace"), trials="sequential", seed=0,
                          budget=AutoBudget(max_trials=budget, give_up=False))
    assert len(res.phases.sequential.epochs) == 1 and res.phases.sequential.stopped == "budget of trials"
    assert res.phases.sequential.trials_drawn <= budget + 4 * budget ** 0.5  # the held-out counts are Poisson


def test_the_last_epoch_takes_its_planned_look_only_once_its_held_out_draws_are_complete():
    from dpaudit.audit.estimators.clopper_pearson import epsilon_lower_bound

    res = audit_mechanism(get_mechanism("laplace"), trials="sequential", seed=2,
                          budget=AutoBudget(max_trials=20_000, give_up=False))
    *early, last = res.phases.sequential.epochs
    assert all(e.planned_look is None for e in early) and last.planned_look is not None
    lower = res.lower_bound
    counts = (lower.details["false_positives"], lower.details["held_out_d0"], lower.details["false_negatives"],
              lower.details["held_out_d1"])
    assert lower.details["planned_look"] == last.planned_look == lower.epsilon  # the last epoch is the best here
    assert last.planned_look == pytest.approx(float(epsilon_lower_bound(*counts, beta=BETA * LAST_LOOK_SHARE)))
    assert last.confidence == pytest.approx(1 - BETA * (FINAL_SHARE + LAST_LOOK_SHARE))


def test_a_stop_before_the_end_of_the_budget_takes_no_planned_look():
    mech = blackbox(_laplace_with_a_tenth_of_its_noise, epsilon=1.0, null_record=0.0, name="laplace-tenth-noise")
    res = audit_mechanism(mech, [0.0], [1.0], trials="sequential", seed=0)
    assert res.phases.sequential.stopped == "violation certified"
    assert all(e.planned_look is None for e in res.phases.sequential.epochs)


@pytest.mark.parametrize("seconds", [3.0, 8.0])
def test_no_epoch_starts_whose_selection_would_outlast_the_budget_of_seconds(monkeypatch, seconds):
    from dpaudit.audit.audits import sequential_trials

    clock = [0.0]
    monkeypatch.setattr(sequential_trials.time, "perf_counter", lambda: clock[0])

    def a_millisecond_a_draw(data, rng, size=None):  # a slow library call, on a clock the test keeps
        clock[0] += 1e-3 * (1 if size is None else size)
        return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)

    mech = blackbox(a_millisecond_a_draw, epsilon=1.0, null_record=0.0, name="slow")
    budget = AutoBudget(max_trials=1_000_000, max_seconds=seconds, give_up=False)
    res = audit_mechanism(mech, [0.0], [1.0], trials="sequential", seed=0, budget=budget)
    assert res.phases.sequential.stopped == "budget of seconds"
    # at most the held-out chunk in flight past the budget; an epoch's selection sample (1,333 draws a dataset in the
    # second, 2,000 in the third: 2.7 and 4 s) started regardless would overrun it by seconds
    assert clock[0] <= 1.05 * seconds
