"""The held-out estimator: the evidence of a two-dataset game through the same bounds the audit reports."""

import numpy as np
import pytest
from dpaudit.attacks.games import TwoDataset
from dpaudit.attacks.held_out_counts import HeldOutCounts
from dpaudit.audit.estimators.certify import Bound, bounds_beside
from dpaudit.audit.estimators.clopper_pearson import epsilon_lower_bound
from dpaudit.audit.estimators.held_out import held_out_lower_bound
from dpaudit.audit.estimators.rate_ratio import kov_ratio_bounds


def test_counts_from_the_runner_and_both_intervals():
    evidence = HeldOutCounts.from_rejections(np.array([30, 9_700, 10_000, 10_050]))
    assert (evidence.false_positives, evidence.n0, evidence.false_negatives, evidence.n1) == (30, 10_000, 350, 10_050)
    bound = held_out_lower_bound(evidence, delta=0.0, confidence=0.95)
    assert bound.epsilon == pytest.approx(float(epsilon_lower_bound(30, 10_000, 350, 10_050, beta=0.05)))
    assert bound.details["interval"] == "two-rates" and bound.trials == 20_050
    ratio = HeldOutCounts(30, 10_000, 350, 10_050, direction=1)
    assert held_out_lower_bound(ratio, delta=0.0, confidence=0.95).epsilon == pytest.approx(
        float(kov_ratio_bounds(30, 10_000, 350, 10_050, 0.05)[1]))


def test_the_gdp_bound_comes_only_at_positive_delta_and_names_its_assumption():
    evidence, game, rng = HeldOutCounts(100, 10_000, 2_000, 10_000), TwoDataset(10_000), np.random.default_rng(0)
    assert bounds_beside(evidence, game, Bound(), delta=0.0, rng=rng) == ()
    (gdp,) = bounds_beside(evidence, game, Bound(), delta=1e-5, rng=rng)
    assert gdp.assumption and gdp.epsilon > 0
