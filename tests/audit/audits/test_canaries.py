"""Canary audits: sound under the null, sound below the truth, and wrong claims flagged by one run."""

import numpy as np
import pytest
from dpaudit.attacks.games import MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.canaries import audit_canaries, audit_scores
from dpaudit.audit.estimators.certify import Bound
from dpaudit.audit.estimators.one_run.rules import GUESS_FRACTIONS, default_errors_allowed, default_guess_counts
from dpaudit.mechanisms import InvalidParameterError, blackbox, get_mechanism
from dpaudit.mechanisms.builtins.canary_targets import canary_gaussian_sum
from dpaudit.mechanisms.records import VectorRecords
from scipy.stats import binom

SEEDS = 200
CONFIDENCE = 0.95


def _ignores_input(data, rng, size=1):
    return rng.normal(size=(size, 64))


NULL = blackbox(_ignores_input, epsilon=1.0, delta=1e-5, name="ignores-input", records=VectorRecords(width=64))


def _max_false_positives(n: int, beta: float) -> int:
    # Under soundness the count of seeds with ε > 0 is at most Binomial(n, β); allow its 99.9% quantile.
    return int(binom.ppf(0.999, n, beta))


@pytest.mark.parametrize("estimator", ["one-run", "one-run-fdp"])
def test_one_run_on_a_mechanism_that_ignores_its_input_certifies_zero(estimator):
    positive = sum(
        audit_canaries(NULL, game=OneRun(200), bound=Bound(estimator), dim=64, seed=s).lower_bound.epsilon > 0
        for s in range(SEEDS)
    )
    assert positive <= _max_false_positives(SEEDS, 1 - CONFIDENCE)


@pytest.mark.parametrize("estimator", ["threshold", "gdp"])
def test_multi_run_on_a_mechanism_that_ignores_its_input_certifies_zero(estimator):
    positive = sum(
        audit_canaries(NULL, game=MultiRun(300), bound=Bound(estimator), dim=64, seed=s).lower_bound.epsilon > 0
        for s in range(SEEDS)
    )
    assert positive <= _max_false_positives(SEEDS, 1 - CONFIDENCE)


@pytest.mark.parametrize(("game", "estimator"), [(OneRun(), "one-run"), (OneRun(), "one-run-fdp"),
                                                 (MultiRun(), "threshold"), (MultiRun(), "gdp")])
def test_saved_scores_with_equal_in_and_out_distributions_certify_zero(game, estimator):
    rng = np.random.default_rng(7)
    positive = 0
    for seed in range(SEEDS):
        obs = Observations(scores=rng.normal(size=300), truth=rng.random(300) < 0.5)
        bound = audit_scores(obs, game=game, bound=Bound(estimator, delta=1e-5), seed=seed).lower_bound
        positive += bound.epsilon > 0
    assert positive <= _max_false_positives(SEEDS, 1 - CONFIDENCE)


@pytest.mark.parametrize("epsilon", [2.0, 8.0])
def test_one_run_bound_stays_below_the_true_epsilon_and_finds_most_of_it(epsilon):
    mech = canary_gaussian_sum(epsilon=epsilon)
    bounds = [audit_canaries(mech, game=OneRun(1000), dim=4000, seed=s).lower_bound.epsilon for s in range(5)]
    assert max(bounds) <= epsilon
    # Idealized one-run numbers at m = 1000 (REFERENCES §5, dpaudit.experiments.one_run_idealized) are ≥ 0.25ε for ε ≥ 2.
    assert np.median(bounds) >= 0.15 * epsilon


def test_one_run_flags_a_gaussian_whose_sigma_is_too_small_for_its_claim():
    # σ calibrated for ε = 8 while ε = 1 is claimed: the one-run game alone catches it.
    liar = canary_gaussian_sum(epsilon=8.0).with_claim(epsilon=1.0)
    for seed in range(3):
        result = audit_canaries(liar, game=OneRun(1000), seed=seed)
        assert result.verdict == "violation"
        assert result.lower_bound.epsilon <= 8.0


def test_one_run_flags_the_mean_whose_noise_is_divided_twice():
    result = audit_canaries(get_mechanism("canary_mean_noise_divided_twice"), game=OneRun(500), seed=0)
    assert result.verdict == "violation"
    assert result.correct <= result.guesses


def test_one_run_on_categories_and_replace_one_stays_sound():
    hist = audit_canaries(get_mechanism("canary_histogram", epsilon=2.0, bins=1000), game=OneRun(1000), seed=0)
    mean = audit_canaries(get_mechanism("canary_mean", epsilon=8.0), game=OneRun(1000), seed=0)
    assert 0.5 * 2.0 <= hist.lower_bound.epsilon <= 2.0  # one-run on a Laplace histogram ≈ randomized response
    assert 0.0 < mean.lower_bound.epsilon <= 8.0
    assert hist.verdict == mean.verdict == "consistent"


def test_multi_run_flags_the_l2_clipped_laplace_and_respects_correct_ones():
    # True ε of the bug is 2√d; the inner-product test sees about μ = ε√2 of it, enough above the claim 2.
    bug = audit_canaries(get_mechanism("canary_laplace_sum_l2_clip", epsilon=2.0), game=MultiRun(20_000), dim=100, seed=0)
    good = audit_canaries(get_mechanism("canary_laplace_sum", epsilon=2.0), game=MultiRun(20_000), dim=100, seed=0)
    assert bug.verdict == "violation"
    assert good.verdict == "consistent" and 0.5 * 2.0 <= good.lower_bound.epsilon <= 2.0


def test_result_reports_estimator_assumption_and_counts():
    result = audit_canaries(canary_gaussian_sum(epsilon=4.0), game=OneRun(400), bound=Bound("one-run-fdp"), seed=1)
    data = result.to_dict()
    assert data["estimator"] == "one-run-fdp" and "Gaussian" in data["assumption"]
    assert data["confidence"] == 0.95 and data["canaries"] == 400
    assert 0 <= data["correct"] <= data["guesses"] <= 400
    assert "lower bound" in result.summary()
    plain = audit_canaries(get_mechanism("laplace"), game=MultiRun(2000), seed=1)
    assert plain.assumption is None and plain.canaries == 2000 and plain.scorer == "black-box-sum"


def test_same_seed_same_result_and_bad_input_is_refused():
    mech = canary_gaussian_sum(epsilon=4.0)
    assert audit_canaries(mech, game=OneRun(300), seed=3).to_dict()["lower_bound"] == \
        audit_canaries(mech, game=OneRun(300), seed=3).to_dict()["lower_bound"]
    with pytest.raises(InvalidParameterError, match="infinite at δ = 0"):
        audit_canaries(get_mechanism("canary_histogram", bins=500), game=OneRun(100), bound=Bound("one-run-fdp"))
    with pytest.raises(InvalidParameterError, match="estimator"):
        audit_canaries(mech, game=MultiRun(100), bound=Bound("oracle"))
    with pytest.raises(InvalidParameterError, match="declares no records"):
        audit_canaries(get_mechanism("laplace"), game=OneRun(100))


@pytest.mark.parametrize("m", [10, 200, 20_000])
def test_default_rules_are_few_and_fit_m(m):
    pairs, allowed = default_guess_counts(m), default_errors_allowed(m)
    assert 1 <= len(pairs) <= len(GUESS_FRACTIONS) and all(1 <= kp + km <= m for kp, km in pairs)
    assert len(set(pairs)) == len(pairs) and len(set(allowed)) == len(allowed)
    assert allowed[0] == 0 and len(allowed) <= 2 + np.log2(m) / 2 and all(0 <= j < m for j in allowed)
