"""`certify`: the one path from a game's scores to its bound, equal to calling the estimator itself."""

import dataclasses

import numpy as np
import pytest
from dpaudit.attacks.games import MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.certify import ESTIMATORS, MEMBERSHIP_ESTIMATORS, Bound, certify, certify_best, estimators_of
from dpaudit.audit.estimators.gdp import gdp_lower_bound
from dpaudit.audit.estimators.one_run.binomial import one_run_lower_bound
from dpaudit.audit.estimators.one_run.fdp import one_run_fdp_lower_bound
from dpaudit.audit.estimators.thresholds import Bonferroni, threshold_lower_bound
from dpaudit.mechanisms import InvalidParameterError
from scipy.stats import norm


def _scores(m: int, mu: float) -> Observations:
    """Return exactly μ-separated Gaussian scores on an even grid (no sampling noise), half IN."""
    grid = norm.ppf((np.arange(m // 2) + 0.5) / (m // 2))
    return Observations(np.concatenate([grid + mu, grid]), np.repeat([True, False], m // 2))


def test_each_game_has_its_estimators_with_the_assumption_free_one_first():
    for game in (MultiRun(), OneRun(10)):
        names = estimators_of(game)
        assert names and all(ESTIMATORS[(Observations, name)].game is type(game) for name in names)
        assert not ESTIMATORS[(Observations, names[0])].gaussian
        assert Bound().estimator_for(game, 0.0) == names[0]
    assert estimators_of(MultiRun)[:2] == ("threshold", "gdp") and estimators_of(OneRun)[:2] == ("one-run", "one-run-fdp")
    assert set(estimators_of(MultiRun)) | set(estimators_of(OneRun)) == set(MEMBERSHIP_ESTIMATORS)


@pytest.mark.parametrize(("game", "bound", "estimator", "keywords"), [
    (MultiRun(), Bound(delta=1e-5), threshold_lower_bound, {}),
    (MultiRun(), Bound("gdp", confidence=0.9, delta=1e-5), gdp_lower_bound, {}),
    (MultiRun(), Bound(delta=1e-5, strategy=Bonferroni()), threshold_lower_bound, {"strategy": Bonferroni()}),
    (OneRun(), Bound(delta=1e-5), one_run_lower_bound, {}),
    (OneRun(guesses=(40, 10)), Bound(delta=1e-5), one_run_lower_bound, {"guess_counts": [(40, 10)]}),
    (OneRun(), Bound("one-run-fdp", delta=1e-5), one_run_fdp_lower_bound, {}),
])
def test_certify_gives_what_the_estimator_gives_on_the_same_stream(game, bound, estimator, keywords):
    obs = _scores(2000, 2.0)
    through = certify(obs, game, bound, delta=bound.delta, rng=np.random.default_rng(3))
    direct = estimator(obs, delta=bound.delta, confidence=bound.confidence, rng=np.random.default_rng(3), **keywords)
    assert dataclasses.replace(through, estimator=None) == direct and through.epsilon > 0
    assert through.estimator == (bound.estimator or estimators_of(game)[0]) and direct.estimator is None


@pytest.mark.parametrize(("game", "bound", "delta", "message"), [
    (MultiRun(), Bound("one-run"), 1e-5, "multi-run game is certified by threshold or gdp"),
    (OneRun(), Bound("gdp"), 1e-5, "one-run game is certified by one-run or one-run-fdp"),
    (MultiRun(), Bound("gdp"), 0.0, "infinite at δ = 0"),
    (OneRun(), Bound("one-run-fdp"), 0.0, "infinite at δ = 0"),
])
def test_an_estimator_that_cannot_certify_the_game_is_one_sentence(game, bound, delta, message):
    with pytest.raises(InvalidParameterError, match=message):
        certify(_scores(100, 1.0), game, bound, delta=delta, rng=np.random.default_rng(0))


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Bound("oracle"), f"estimator must be one of {', '.join(sorted({name for _, name in ESTIMATORS}))}"),
    (lambda: Bound(confidence=1.0), "'confidence' parameter of Bound"),
    (lambda: Bound(delta=1.5), "'delta' parameter of Bound"),
])
def test_bad_bounds_are_refused_at_construction(make, message):
    with pytest.raises(InvalidParameterError, match=message):
        make()


def test_delta_is_the_one_given_else_the_claims_else_zero():
    assert Bound(delta=1e-6).delta_for(1e-5) == 1e-6
    assert Bound().delta_for(1e-5) == 1e-5
    assert Bound().delta_for(None) == 0.0


def test_the_best_of_k_arms_holds_at_the_stated_confidence_on_tight_scores():
    # Three arms of exactly ε = 1 randomized-response scores each: each bound above 1 is wrong; the best of
    # three at 1 − β/3 each is wrong at rate ≤ β = 0.05 (Bonferroni), so over 150 seeds at most
    # 7.5 + 3·√(150·0.05·0.95) ≈ 15 wrong ones.
    wrong = 0
    for seed in range(150):
        rng = np.random.default_rng(seed)
        arms = []
        for _ in range(3):
            truth = rng.permutation(400) < 200
            flip = rng.random(400) < 1 / (1 + np.e)
            arms.append(Observations((truth ^ flip).astype(float), truth))
        best, lower = certify_best(tuple(arms), MultiRun(400), Bound(), delta=0.0, rng=rng)
        wrong += lower.epsilon > 1.0
        assert lower.confidence == 0.95 and "best of 3 canaries" in lower.method and 0 <= best < 3
    assert wrong <= 15


def test_the_best_arm_is_the_one_that_separates():
    rng = np.random.default_rng(0)
    truth = rng.permutation(200) < 100
    noise = Observations(rng.normal(size=200), truth)
    signal = Observations(truth + rng.normal(0, 0.1, 200), truth)
    best, lower = certify_best((noise, signal, noise), MultiRun(200), Bound(), delta=0.0, rng=rng)
    alone = certify(signal, MultiRun(200), Bound(confidence=1 - 0.05 / 3), delta=0.0, rng=np.random.default_rng(0))
    assert best == 1 and lower.epsilon == pytest.approx(alone.epsilon, rel=0.05)
