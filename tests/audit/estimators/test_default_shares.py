"""The default threshold strategy's split of β: fixed before the game, positive for each strategy, at most β in all.

Its soundness over seeds (null and tight scores) is in test_estimator_soundness.py ("threshold-default",
"gdp-default"); that the default is never below either strategy at its share is in test_dominating_pair.py.
"""

import numpy as np
import pytest
from dpaudit.attacks.games import MultiRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.certify import Bound, certify
from dpaudit.audit.estimators.thresholds import (
    DEFAULT_SHARES,
    DEFAULT_STRATEGIES,
    BestOf,
    DominatingPair,
    SimultaneousBands,
    Split,
    threshold_lower_bound,
)
from dpaudit.errors import DPAuditError


def test_the_default_pays_each_strategy_a_positive_share_and_at_most_beta_in_all():
    default = BestOf()
    assert default.strategies == DEFAULT_STRATEGIES and default.weights() == DEFAULT_SHARES
    assert all(share > 0.0 for share in DEFAULT_SHARES) and sum(DEFAULT_SHARES) <= 1.0
    assert DEFAULT_SHARES[0] > DEFAULT_SHARES[1]  # most of β to the dominating pair
    assert default.describe() == "best of dominating-pair (β·0.95), simultaneous-bands (β·0.05)"


def test_other_strategies_share_equally_and_given_shares_are_kept():
    assert BestOf((DominatingPair(), Split())).weights() == (0.5, 0.5)
    assert BestOf((DominatingPair(), SimultaneousBands(), Split())).weights() == pytest.approx((1 / 3,) * 3)
    assert BestOf(shares=(0.5, 0.5)).weights() == (0.5, 0.5)
    with pytest.raises(DPAuditError, match="shares"):
        BestOf(shares=(0.95, 0.1))


@pytest.mark.parametrize("n", [200, 2000])
def test_the_split_depends_on_nothing_but_the_rule(n):
    """Scores of two sizes and two laws: the bound reports the same shares of β, and certify's default is BestOf()."""
    rng = np.random.default_rng(n)
    for shift in (0.0, 1.0):
        obs = Observations.from_in_out(rng.normal(shift, 1.0, n), rng.normal(size=n))
        bound = threshold_lower_bound(obs, delta=1e-5, rng=n)
        assert bound.details["strategy"] == BestOf().describe()
        again = certify(obs, MultiRun(2 * n), Bound(), delta=1e-5, rng=np.random.default_rng(n))
        assert again.epsilon == bound.epsilon
