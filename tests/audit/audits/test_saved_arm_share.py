"""Scores kept among several arms carry their share of β, saved and loaded, and are certified again at that share."""

import dataclasses

import numpy as np
import pytest
from dpaudit.attacks.games import MultiRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit import Bound, audit_scores


def _arm(seed: int) -> Observations:
    rng = np.random.default_rng(seed)
    truth = rng.random(4000) < 0.5
    return Observations(scores=rng.normal(truth * 1.0, 1.0), truth=truth)


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_the_share_travels_with_saved_scores(tmp_path, suffix):
    kept = dataclasses.replace(_arm(0), beta_share=0.25)
    loaded = Observations.load(kept.save(tmp_path / f"arm{suffix}"))
    assert loaded.beta_share == 0.25 and np.array_equal(loaded.scores, kept.scores)
    assert "beta_share" not in _arm(0).to_dict()


def test_a_kept_arm_is_certified_again_at_its_share_and_stated_at_the_confidence_asked():
    game, kept = MultiRun(4000), dataclasses.replace(_arm(1), beta_share=0.25)
    again = audit_scores(kept, game=game, bound=Bound(confidence=0.95), seed=3)
    at_share = audit_scores(_arm(1), game=game, bound=Bound(confidence=1 - 0.05 * 0.25), seed=3)
    whole = audit_scores(_arm(1), game=game, bound=Bound(confidence=0.95), seed=3)
    assert again.lower_bound.epsilon == at_share.lower_bound.epsilon < whole.lower_bound.epsilon
    assert again.lower_bound.confidence == 0.95


def test_a_share_outside_zero_to_one_is_refused_in_one_sentence():
    from dpaudit.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="beta_share"):
        dataclasses.replace(_arm(2), beta_share=0.0)
