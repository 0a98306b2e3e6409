"""One-run rules: fixed and stopping rules' outcomes, their shares of β, and the stopping rules' level."""

import numpy as np
import pytest
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.one_run.binomial import one_run_lower_bound
from dpaudit.audit.estimators.one_run.rules import Rules, check_rules, make_guesses, rank_truth
from dpaudit.errors import DPAuditError
from scipy.special import expit
from scipy.stats import binom


def _ranked(truth: list[bool]) -> Observations:
    """Canaries whose scores rank them in the order given."""
    return Observations(scores=np.arange(len(truth), 0, -1, dtype=float), truth=truth)


def test_fixed_rules_count_correct_answers_on_both_sides():
    obs = _ranked([True, False, True, False, True, False])
    rules = Rules([(2, 0), (0, 1), (1, 2)], [], np.array([0.2, 0.4, 0.6]))
    top2, bottom1, both = make_guesses(rank_truth(obs, np.random.default_rng(0)), rules=rules, beta=0.05)
    assert (top2.correct, bottom1.correct, both.correct) == (1, 1, 2)
    assert both.guesses == 3 and (top2.beta, bottom1.beta, both.beta) == pytest.approx((0.01, 0.02, 0.03))


def test_a_stopping_rule_guesses_until_its_next_wrong_guess():
    """Wrong guesses at ranks 2, 4, 5: j = 0, 1, 2 stop there; j = 5 runs out of canaries (T = m, v = m − j)."""
    obs = _ranked([True, True, False, True, False, False, True])
    rules = Rules([], [0, 1, 2, 5], np.full(4, 0.25))
    outcomes = make_guesses(rank_truth(obs, np.random.default_rng(0)), rules=rules, beta=0.04)
    assert [(g.k_plus, g.k_minus, g.correct, g.errors_allowed) for g in outcomes] == [
        (2, 0, 2, 0), (4, 0, 3, 1), (5, 0, 3, 2), (7, 0, 2, 5)]
    assert all(g.sides == 1 and g.beta == pytest.approx(0.01) for g in outcomes)


def test_ties_are_broken_at_random_not_by_position():
    """All scores equal and the truth sorted IN-first: guessing must be no better than chance."""
    m, k = 1000, 100
    obs = Observations(scores=np.zeros(m), truth=np.arange(m) < m // 2)
    (fixed, stopped) = make_guesses(rank_truth(obs, np.random.default_rng(0)),
                                    rules=Rules([(k, 0)], [0], np.full(2, 0.5)), beta=0.05)
    # Hypergeometric: mean k/2, sd ≈ 4.7; 6 sd leaves no room for position-based ties (k correct).
    assert abs(fixed.correct - k / 2) <= 6 * np.sqrt(k / 4)
    # A run of IN from the top: geometric, P[T ≥ 20] ≈ 2⁻²⁰ by chance, certain if ties followed positions.
    assert stopped.k_plus < 20


@pytest.mark.parametrize("errors_allowed, eps", [(0, 2.0), (3, 0.5)])
def test_stopping_rules_are_sound_on_exactly_tight_randomized_response(errors_allowed, eps):
    """Each canary's output is its bit flipped w.p. 1/(1 + e^ε): exactly ε-DP, and IN for output 1 is right w.p. e^ε/(1+e^ε).

    Scores are the output plus a small noise that orders canaries within a
    bit at random; a stopping rule then sees a run of independent coins, the
    tightest case. Over 2000 games the estimator may exceed ε in at most a
    binomial 10⁻⁴ quantile of β = 5% of them.
    """
    runs, m, beta = 2000, 400, 0.05
    rng = np.random.default_rng(11 + errors_allowed)
    exceed = 0
    for _ in range(runs):
        truth = rng.random(m) < 0.5
        output = np.where(rng.random(m) < expit(eps), truth, ~truth)
        obs = Observations(scores=output + 0.01 * rng.random(m), truth=truth)
        lb = one_run_lower_bound(obs, delta=1e-6, confidence=1 - beta, errors_allowed=[errors_allowed],
                                 calibration="bonferroni", rng=rng)
        exceed += lb.epsilon > eps
    assert exceed <= binom.isf(1e-4, runs, beta)


@pytest.mark.parametrize("guess_counts, errors_allowed, match", [
    ([], [], "at least one rule"), (None, [-1], "errors_allowed"), (None, [200], "below 200"),
    (None, "many", "errors_allowed"), (None, [1.5], "errors_allowed"), ([(1, 2, 3)], None, "pairs")])
def test_invalid_rules_get_one_sentence(guess_counts, errors_allowed, match):
    with pytest.raises(DPAuditError, match=match) as info:
        check_rules(guess_counts, errors_allowed, 200, "one_run_lower_bound")
    assert "\n" not in str(info.value) and str(info.value).endswith(".")
