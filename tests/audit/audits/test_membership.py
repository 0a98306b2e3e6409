"""The one membership pipeline: checks first, one seed for everything, saved scores re-audited alike."""

import numpy as np
import pytest
from dpaudit.attacks.games import MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.canaries import audit_canaries, audit_scores
from dpaudit.audit.audits.membership import Played, run_membership_audit
from dpaudit.audit.audits.subject import Subject
from dpaudit.audit.estimators.certify import Bound
from dpaudit.mechanisms import InvalidParameterError
from dpaudit.mechanisms.base import Claim
from dpaudit.mechanisms.builtins.canary_targets import canary_gaussian_sum


def _never_played(data_rng, game_rng):
    raise AssertionError("the game was played before its input was checked")


@pytest.mark.parametrize(("game", "bound", "message"), [
    ("multi-run", Bound(), "'game' parameter of test must be MultiRun"),
    (MultiRun(), "threshold", "'bound' parameter of test must be a Bound"),
    (MultiRun(), Bound("one-run"), "certified by threshold or gdp"),
    (OneRun(), Bound("one-run-fdp"), "infinite at δ = 0"),
])
def test_bad_input_fails_before_the_game_is_played(game, bound, message):
    with pytest.raises(InvalidParameterError, match=message):
        run_membership_audit(owner="test", game=game, bound=bound, seed=0, subject=Subject(), play=_never_played)


def test_the_bound_is_at_the_claims_delta_unless_one_is_given():
    obs = Observations(np.linspace(0, 1, 200), np.arange(200) >= 100)
    subject = Subject(claim=Claim(1.0, 1e-5))
    for bound, delta in ((Bound(), 1e-5), (Bound(delta=1e-3), 1e-3)):
        result = run_membership_audit(owner="test", game=MultiRun(), bound=bound, seed=0, subject=subject,
                                      play=lambda data_rng, game_rng: Played(obs, "given"))
        assert result.lower_bound.delta == delta and result.claim == subject.claim and result.scorer == "given"


@pytest.mark.parametrize("game", [MultiRun(400), OneRun(300)])
def test_saved_scores_re_audited_give_the_same_bound_for_the_same_seed(game):
    mech = canary_gaussian_sum(epsilon=4.0)
    played = audit_canaries(mech, game=game, dim=64, seed=5)
    again = audit_scores(played.observations, game=game, claim=mech.claim, seed=5)
    if isinstance(game, OneRun):
        assert again.lower_bound == played.lower_bound and again.verdict == played.verdict
    else:
        # The multi-run game paid β/2 for each score direction; its saved scores, as scored, are audited one way at β.
        assert played.attack["direction"] == "members score higher"
        assert again.lower_bound == audit_scores(played.observations, game=game, claim=mech.claim, seed=5).lower_bound
    assert audit_canaries(mech, game=game, dim=64, seed=5).lower_bound == played.lower_bound


def test_the_one_run_game_has_no_random_or_pair_canaries():
    with pytest.raises(InvalidParameterError, match="one-run game plays m fixed canaries"):
        audit_canaries(canary_gaussian_sum(), game=OneRun(10), canary="pair")
