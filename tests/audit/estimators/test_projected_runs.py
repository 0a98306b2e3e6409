"""The runs an assumption-free audit would need if the scores were μ-GDP, and the AUC point estimate of μ."""

import numpy as np
import pytest
from dpaudit.attacks.games import MultiRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.membership import Played, run_membership_audit
from dpaudit.audit.audits.subject import Subject
from dpaudit.audit.estimators.certify import Bound
from dpaudit.audit.estimators.projected_runs import _certified, auc_mu, projected_runs, projected_runs_of
from dpaudit.audit.theory.profiles import gdp_epsilon
from dpaudit.mechanisms import Claim
from scipy.stats import binom, norm


def _grid_scores(mu: float, n: int) -> Observations:
    """Two unit Gaussians μ apart, as exact quantiles of an even grid (no sampling noise)."""
    q = norm.ppf((np.arange(n) + 0.5) / n)
    return Observations(np.concatenate([q + mu, q]), np.concatenate([np.ones(n, bool), np.zeros(n, bool)]))


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.0])
def test_auc_mu_recovers_the_shift_of_two_unit_gaussians(mu):
    assert auc_mu(_grid_scores(mu, 4000)) == pytest.approx(mu, abs=0.02)


def test_auc_mu_is_zero_without_both_classes():
    assert auc_mu(Observations(np.arange(5.0), np.ones(5, bool))) == 0.0


def test_no_projection_when_mu_gdp_itself_is_below_the_claim():
    mu = 0.4
    assert projected_runs(mu, claim_epsilon=gdp_epsilon(delta=1e-5, mu=mu) + 0.01, delta=1e-5, confidence=0.95) is None


@pytest.mark.parametrize("mu", [0.6, 1.0, 2.0])
def test_the_projection_is_the_first_run_count_that_certifies_above_the_claim(mu):
    claim = 1.2
    runs = projected_runs(mu, claim_epsilon=claim, delta=1e-5, confidence=0.95)
    assert _certified(mu, runs, 1e-5, 0.05) > claim
    assert _certified(mu, int(runs * 0.9), 1e-5, 0.05) <= claim


def test_a_larger_shift_needs_fewer_runs():
    needed = [projected_runs(mu, claim_epsilon=1.2, delta=1e-5, confidence=0.95) for mu in (0.6, 1.0, 2.0)]
    assert needed[0] > needed[1] > needed[2]


def test_scores_within_noise_of_no_signal_project_nothing_beyond_a_fraction_beta_of_seeds():
    seeds, confidence = 200, 0.95
    projected = 0
    for seed in range(seeds):  # a correct, useless attack: members' scores drawn like non-members'
        rng = np.random.default_rng(seed)
        obs = Observations(rng.normal(size=1000), rng.random(1000) < 0.5)
        projected += projected_runs_of(obs, claim_epsilon=0.01, delta=1e-5, confidence=confidence) is not None
    assert projected <= binom.ppf(0.999, seeds, 1 - confidence)


def test_scores_that_separate_members_are_projected_as_their_mu_says():
    obs = _grid_scores(1.0, 500)
    expected = projected_runs(auc_mu(obs), claim_epsilon=1.2, delta=1e-5, confidence=0.95)
    assert expected is not None
    assert projected_runs_of(obs, claim_epsilon=1.2, delta=1e-5, confidence=0.95) == expected


def _report_row(obs, claim_epsilon: float) -> str:
    """Return the 'projected runs' row of a multi-run audit of `obs` (a ladder's arms when a tuple) with the GDP bound
    beside ('' when it has none)."""
    runs = (obs[0] if isinstance(obs, tuple) else obs).size
    result = run_membership_audit(owner="test", game=MultiRun(runs), bound=Bound(), seed=0,
                                  subject=Subject("grid", {}, Claim(claim_epsilon, 1e-5)),
                                  play=lambda data_rng, game_rng: Played(obs, "grid"), beside="gdp")
    return dict(result.rows()).get("projected runs", "")


def test_a_report_says_why_scores_within_noise_of_no_signal_project_nothing():
    row = _report_row(_grid_scores(0.0, 100), claim_epsilon=1.0)
    assert row.startswith("none: the scores do not separate members") and "μ̂ = 0.000" in row


def test_a_report_says_why_separating_scores_too_weak_for_the_claim_project_nothing():
    obs = _grid_scores(0.5, 100)  # AUC = Φ(0.5/√2) ≈ 0.64: the U test rejects at 100 per side (z ≈ 3.4)
    row = _report_row(obs, claim_epsilon=gdp_epsilon(delta=1e-5, mu=0.6))
    assert row.startswith(f"none: the scores' μ̂ = {auc_mu(obs):.3f}") and "no number of runs" in row


def test_a_ladder_without_a_projection_states_the_rule_since_its_projected_arm_may_not_be_the_reported_one():
    weak = _grid_scores(0.0, 100)
    row = _report_row((weak, weak), claim_epsilon=1.0)
    assert row.startswith("none: a projection is printed only when the scores separate members")


def test_a_report_with_a_projection_prints_it_and_no_reason():
    assert _report_row(_grid_scores(2.0, 100), claim_epsilon=3.0).startswith("about ")
