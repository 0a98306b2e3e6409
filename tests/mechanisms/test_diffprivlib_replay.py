"""Replay of diffprivlib's adapters in diffprivlib's environment: its draws recorded and replayed at the random_state it
is handed (mechanisms/scripts/diffprivlib_side.py), the label set of LogisticRegression found as extra draws, and
diffprivlib 0.4.1 (noise from `secrets`) named as not replayable. Marked `libraries`: each builds its environment on
first use."""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.attacks.replay import NotReplayable, replay_pair
from dpaudit.mechanisms.adapters import diffprivlib as dl

pytestmark = pytest.mark.libraries


def _replay(mech, d0=None, d1=None):
    pair = mech.default_pair if d0 is None else (d0, d1)
    return replay_pair(mech, *pair, seed=np.random.SeedSequence(0))


def test_laplace_draws_are_recorded_at_the_random_state_and_the_release_moves_by_the_answer_alone(built):
    r = _replay(built("diffprivlib_laplace"))
    assert r.tape and {d.method for d in r.tape} == {"random"} and not r.divergences()
    assert r.release1 - r.release0 == pytest.approx(1.0, abs=1e-9)  # the answers 0 and 1, the same noise


def test_nanmean_moves_by_more_than_its_calibration_allows_with_the_noise_frozen(built):
    r = _replay(built("diffprivlib_nanmean"), np.array([np.nan] * 4 + [1.0]), np.array([np.nan] * 4 + [0.0]))
    assert not r.divergences() and r.sensitivity().l1 > 1.0 / 5  # (upper − lower)/n is the move it is calibrated to


def test_logistic_regression_s_label_set_from_the_data_asks_for_more_draws(built):
    r = _replay(built("diffprivlib_logistic_regression"))
    assert "count" in {d.kind for d in r.divergences()}


def test_diffprivlib_0_4_1_draws_from_secrets_and_is_named_not_replayable(built):
    with pytest.raises(NotReplayable, match="a source besides the random state"):
        _replay(built("diffprivlib_laplace", environment=dl.OLDER_ENVIRONMENT))


def test_the_laplace_gaussian_and_geometric_moves_are_priced_by_their_declared_law_and_the_others_are_not(built):
    from dpaudit.audit.audits.replay import implied_epsilon

    laplace = _replay(built("diffprivlib_laplace", epsilon=0.5)).sensitivity()
    assert laplace.unpriced == () and laplace.pure_epsilon == pytest.approx(0.5, rel=1e-6)  # Δ/b, b = Δ/ε
    gaussian = _replay(built("diffprivlib_gaussian", epsilon=0.5, delta=1e-5)).sensitivity()
    sigma = np.sqrt(2 * np.log(1.25 / 1e-5)) / 0.5
    assert gaussian.unpriced == () and gaussian.gaussian_mu == pytest.approx(1 / sigma, rel=1e-6)  # two standard normals
    geometric = _replay(built("diffprivlib_geometric", epsilon=0.7)).sensitivity()
    assert geometric.unpriced == () and geometric.pure_epsilon == pytest.approx(0.7, rel=1e-6)
    for name in ("diffprivlib_laplace_truncated", "diffprivlib_laplace_bits"):
        found = _replay(built(name)).sensitivity()
        assert found.unpriced and implied_epsilon(found, 0.0) is None
