"""Edge cases of every score estimator: each gives one clear sentence or a defined answer."""

from functools import partial

import numpy as np
import pytest
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.gdp import gdp_from_counts, gdp_lower_bound
from dpaudit.audit.estimators.one_run.binomial import one_run_lower_bound
from dpaudit.audit.estimators.one_run.fdp import one_run_fdp_lower_bound
from dpaudit.audit.estimators.one_run.rules import STOPPING_SHARE, default_errors_allowed, default_guess_counts
from dpaudit.audit.estimators.thresholds import DEFAULT_BONFERRONI_COUNT, Bonferroni, threshold_lower_bound
from dpaudit.errors import DPAuditError
from scipy.stats import norm

ESTIMATORS = [threshold_lower_bound, gdp_lower_bound, one_run_lower_bound, one_run_fdp_lower_bound]


def _sentence(info: pytest.ExceptionInfo) -> str:
    text = info.value.args[0]
    assert text.endswith(".") and "\n" not in text
    return text


def _separated(m: int = 2000, mu: float = 3.0) -> Observations:
    base = norm.ppf((np.arange(m // 2) + 0.5) / (m // 2))
    return Observations.from_in_out(base + mu, base)


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("which", ["in", "out"])
def test_one_class_only_is_refused_with_a_sentence(estimator, which):
    scores = np.linspace(0.0, 1.0, 50)
    obs = Observations.from_in_out(scores, []) if which == "in" else Observations.from_in_out([], scores)
    with pytest.raises(DPAuditError) as info:
        estimator(obs, delta=1e-5, rng=0)
    assert "both IN and OUT" in _sentence(info)


@pytest.mark.parametrize("estimator", [gdp_lower_bound, one_run_fdp_lower_bound])
def test_gdp_estimators_refuse_delta_zero_instead_of_returning_inf(estimator):
    with pytest.raises(DPAuditError) as info:
        estimator(_separated(), delta=0.0, rng=0)
    assert "δ = 0" in _sentence(info)
    with pytest.raises(DPAuditError):
        gdp_from_counts(1, 100, 1, 100, delta=0.0)


def test_threshold_estimator_gives_a_finite_pure_epsilon_at_delta_zero():
    lb = threshold_lower_bound(_separated(), delta=0.0, rng=0)
    assert 0.0 < lb.epsilon < np.inf


@pytest.mark.parametrize("bad", [[1.0, np.nan, 0.5], [np.nan]])
def test_nan_scores_are_refused_with_a_sentence(bad):
    with pytest.raises(DPAuditError) as info:
        Observations.from_in_out(bad, [0.0, 1.0])
    assert "NaN" in _sentence(info)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_infinite_scores_order_like_any_other(estimator):
    """The highest score moved to +inf and the lowest to −inf: same order, same bound."""
    finite = _separated()
    scores = finite.scores.copy()
    scores[np.argmax(scores)], scores[np.argmin(scores)] = np.inf, -np.inf
    infinite = Observations(scores=scores, truth=finite.truth)
    with_inf = estimator(infinite, delta=1e-5, rng=0).epsilon
    assert np.isfinite(with_inf) and with_inf > 0.0
    assert with_inf == pytest.approx(estimator(finite, delta=1e-5, rng=0).epsilon, rel=1e-9)


def test_bonferroni_quantiles_of_infinite_scores_are_never_nan():
    scores = np.concatenate([np.full(60, np.inf), np.full(40, -np.inf), np.zeros(100)])
    obs = Observations(scores=scores, truth=np.arange(200) % 2 == 0)
    lb = threshold_lower_bound(obs, delta=0.0, strategy=Bonferroni(count=10, fraction=0.5), rng=0)
    assert not np.isnan(lb.details["threshold"])


@pytest.mark.parametrize("bad", [np.zeros((2, 3)), [[1.0], [2.0]]])
def test_two_dimensional_scores_are_refused_not_flattened(bad):
    with pytest.raises(DPAuditError) as info:
        Observations.from_in_out(bad, [0.0])
    assert "one-dimensional" in _sentence(info)


def test_bonferroni_has_a_default_count():
    assert Bonferroni().size == DEFAULT_BONFERRONI_COUNT
    lb = threshold_lower_bound(_separated(), delta=1e-5, strategy=Bonferroni(), rng=0)
    assert lb.details["thresholds_tried"] == DEFAULT_BONFERRONI_COUNT and lb.epsilon > 0.0


@pytest.mark.parametrize("estimator", [partial(one_run_lower_bound, calibration="bonferroni"), one_run_fdp_lower_bound])
def test_one_run_estimators_default_to_rules_fixed_by_m(estimator):
    obs = _separated()
    lb = estimator(obs, delta=1e-5, rng=0)
    pairs, allowed = default_guess_counts(obs.size), default_errors_allowed(obs.size)
    assert lb.details["candidates"] == [list(p) for p in pairs] and lb.details["errors_allowed"] == allowed
    fixed, stopping = np.array(lb.details["beta_per_candidate"]), np.array(lb.details["beta_per_errors_allowed"])
    assert lb.details["calibration"] == "bonferroni" and fixed.sum() + stopping.sum() == pytest.approx(0.05)
    assert stopping.sum() == pytest.approx(0.05 * STOPPING_SHARE) and np.all(np.diff(stopping) < 0)
    given = estimator(obs, delta=1e-5, guess_counts=pairs, rng=0)
    assert given.details["beta_per_candidate"] == pytest.approx([0.05 / len(pairs)] * len(pairs))
    assert given.details["errors_allowed"] == []


def test_the_joint_test_keeps_the_default_rules_and_their_proportions():
    """Its levels are those each rule had in effect: the Bonferroni shares scaled by one common factor."""
    obs = _separated()
    joint = one_run_lower_bound(obs, delta=1e-5, rng=0)
    bonferroni = one_run_lower_bound(obs, delta=1e-5, calibration="bonferroni", rng=0)
    assert joint.details["calibration"] == "joint" and joint.details["candidates"] == bonferroni.details["candidates"]
    levels = np.array(joint.details["beta_per_candidate"] + joint.details["beta_per_errors_allowed"])
    shares = np.array(bonferroni.details["beta_per_candidate"] + bonferroni.details["beta_per_errors_allowed"])
    assert levels / levels.sum() == pytest.approx(shares / shares.sum())


def test_default_rules_catch_a_leak_confined_to_a_few_canaries():
    """20 of 10⁴ canaries IN with scores far above all others: balanced rules certify nothing, a stopping rule does."""
    rng = np.random.default_rng(3)
    truth = rng.random(10_000) < 0.5
    scores = rng.normal(size=truth.size)
    scores[np.flatnonzero(truth)[:20]] += 50.0
    obs = Observations(scores=scores, truth=truth)
    lb = one_run_fdp_lower_bound(obs, delta=1e-5, rng=0)
    assert lb.details["errors_allowed_of_rule"] == 0 and lb.details["correct"] == lb.details["guesses"] >= 20
    explicit = one_run_fdp_lower_bound(obs, delta=1e-5, guess_counts=[(500, 500), (1000, 1000)], rng=0)
    assert lb.epsilon > 0.0 == explicit.epsilon
