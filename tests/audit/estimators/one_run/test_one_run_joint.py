"""The joint (max-statistic Monte Carlo) test of the one-run rules: its parts, its level, when it applies."""

import math

import numpy as np
import pytest
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.one_run.binomial import one_run_lower_bound
from dpaudit.audit.estimators.one_run.joint import EPSILONS, EXCEEDANCES, MAX_WORK, _counts_at, _running_order, joint_draws
from dpaudit.audit.estimators.one_run.rules import check_rules, make_guesses, rank_truth
from dpaudit.errors import DPAuditError
from scipy.special import expit
from scipy.stats import binom


def test_running_order_is_the_kth_largest_of_each_prefix():
    values = np.random.default_rng(0).integers(0, 30, (5, 40))
    for k in (1, 2, 5):
        expected = [[np.sort(row[:length + 1])[-k] if length + 1 >= k else -1 for length in range(40)] for row in values]
        assert np.array_equal(_running_order(values, k), expected)


def test_counts_at_counts_each_prefix_at_each_grid_point():
    values = np.random.default_rng(1).integers(0, 50, (4, 30))
    ends, start, width = np.array([3, 10, 30]), 20, 8
    counts = _counts_at(values, ends, start, width)
    for b, end in enumerate(ends):
        for g in range(width):
            assert np.array_equal(counts[b, :, g], (values[:, :end] <= start + g).sum(axis=1))


def test_the_epsilon_grid_is_increasing_with_steps_of_at_most_one_percent_or_a_hundredth():
    steps = np.diff(EPSILONS)
    assert EPSILONS[0] == 0.0 and np.all(steps > 0)
    assert np.all(steps <= np.maximum(0.01, 0.01 * EPSILONS[:-1]) + 1e-12)


def _randomized_response(rng: np.random.Generator, m: int, eps: float) -> Observations:
    """Each canary's output is its bit kept w.p. e^ε/(1+e^ε): exactly ε-DP, and the guesses are i.i.d. coins.

    A small noise orders canaries within an output at random: the tightest
    case of the domination the joint test rests on.
    """
    truth = rng.random(m) < 0.5
    output = np.where(rng.random(m) < expit(eps), truth, ~truth)
    return Observations(scores=output + 0.01 * rng.random(m), truth=truth)


@pytest.mark.parametrize("eps, delta", [(0.0, 0.0), (1.0, 1e-5)])
def test_on_exactly_tight_randomized_response_the_bound_exceeds_epsilon_at_rate_at_most_beta(eps, delta):
    """Over 300 games the bound exceeds the true ε in at most a binomial 10⁻⁴ quantile of β = 5% of them.

    Randomized response makes the guesses exactly the i.i.d. coins the test
    compares with, so the test runs at its full level here: the tightest case.
    """
    runs, m, beta = 300, 200, 0.05
    rng = np.random.default_rng(29 + int(eps))
    exceed = sum(one_run_lower_bound(_randomized_response(rng, m, eps), delta=delta, rng=rng).epsilon > eps
                 for _ in range(runs))
    assert exceed <= binom.isf(1e-4, runs, beta)


def test_the_observed_rule_counts_agree_with_the_bonferroni_path():
    rng = np.random.default_rng(3)
    truth = rng.random(400) < 0.5
    obs = Observations(scores=rng.normal(size=400) + 1.5 * truth, truth=truth)
    joint = one_run_lower_bound(obs, delta=1e-5, rng=7)
    rules = check_rules(None, None, 400, "test")
    outcomes = make_guesses(rank_truth(obs, np.random.default_rng(7)), rules=rules, beta=0.05)
    same = [g for g in outcomes if (g.k_minus, g.errors_allowed) == (joint.details["k_minus"], joint.details["errors_allowed_of_rule"])
            and (g.errors_allowed is not None or g.k_plus == joint.details["k_plus"])]
    assert joint.details["calibration"] == "joint"
    assert len(same) == 1 and (same[0].k_plus, same[0].correct) == (joint.details["k_plus"], joint.details["correct"])


def test_joint_is_at_least_bonferroni_on_average_where_the_rules_overlap():
    """Gaussian scores, μ = 1, 200 canaries, 30 games: the joint test certifies more on average."""
    rng = np.random.default_rng(5)
    joint, bonferroni = [], []
    for seed in range(30):
        truth = rng.random(200) < 0.5
        obs = Observations(scores=rng.normal(size=200) + truth, truth=truth)
        joint.append(one_run_lower_bound(obs, delta=1e-5, rng=seed).epsilon)
        bonferroni.append(one_run_lower_bound(obs, delta=1e-5, rng=seed, calibration="bonferroni").epsilon)
    assert np.mean(joint) > np.mean(bonferroni)


def test_auto_falls_back_to_bonferroni_for_one_rule_or_where_delta_costs_the_joint_test_too_much():
    assert joint_draws(check_rules(None, None, 20_000, "test"), canaries=20_000, delta=1e-5, beta=0.05) is None
    draws = joint_draws(check_rules(None, None, 200, "test"), canaries=200, delta=1e-5, beta=0.05)
    assert draws == pytest.approx(50 / (0.05 - 200 * 1e-5 / 2), abs=1)
    assert joint_draws(check_rules([(20, 20)], None, 200, "test"), canaries=200, delta=1e-5, beta=0.05) is None
    rng = np.random.default_rng(0)
    truth = rng.random(20_000) < 0.5
    lb = one_run_lower_bound(Observations(scores=rng.normal(size=20_000) + truth, truth=truth), delta=1e-5, rng=0)
    assert lb.details["calibration"] == "bonferroni"


def test_pure_claims_test_jointly_until_the_simulation_would_exceed_its_work_budget():
    draws = math.ceil(EXCEEDANCES / 0.05)  # at δ = 0 the joint test pays no δ price
    assert joint_draws(check_rules(None, None, 2_000, "test"), canaries=2_000, delta=0.0, beta=0.05) == draws
    wide = check_rules(None, None, 10_000, "test")
    passes = 1 + sum(j + 1 for j in wide.errors_allowed)
    assert draws * 10_000 * passes > MAX_WORK
    assert joint_draws(wide, canaries=10_000, delta=0.0, beta=0.05) is None
    assert joint_draws(check_rules([(10, 10), (100, 100)], [0], 10_000, "test"), canaries=10_000, delta=0.0,
                       beta=0.05) == draws


@pytest.mark.parametrize("kwargs, match", [
    ({"calibration": "holm"}, "must be one of auto, joint, bonferroni"),
    ({"calibration": "joint", "guess_counts": [(150, 0), (0, 100)]}, "cannot test these rules jointly"),
    ({"calibration": "joint", "delta": 1e-3}, "cannot test these rules jointly"),
    ({"calibration": "joint", "guess_counts": [(20, 20)]}, "cannot test these rules jointly"),
])
def test_calibration_errors_are_one_sentence(kwargs, match):
    rng = np.random.default_rng(0)
    obs = Observations(scores=rng.normal(size=200), truth=rng.random(200) < 0.5)
    with pytest.raises(DPAuditError, match=match) as info:
        one_run_lower_bound(obs, **{"delta": 1e-5, "rng": 0, **kwargs})
    assert "\n" not in str(info.value) and str(info.value).endswith(".")
