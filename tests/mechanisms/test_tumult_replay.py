"""Replay of Tumult Core's measurements on a number in Tumult's environment: its draws recorded and replayed at its one
interception point, `prng()` (mechanisms/scripts/tumult_side.py), and the Spark queries of Core and Analytics, whose
noise is drawn in Spark's workers, refused in one sentence. Skipped without the `tumult-core` environment, as the
adapter tests are (tests/mechanisms/test_tumult_adapters.py); no test here starts Spark."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from dpaudit.attacks.replay import NotReplayable, replay_pair
from dpaudit.mechanisms import blackbox
from dpaudit.mechanisms.adapters import tumult_core as ta
from dpaudit.mechanisms.builtins.floating_point import from_bits

needs_tumult = pytest.mark.skipif(ta.tumult_python() is None, reason="Tumult's environment is absent (`dpaudit env create tumult-core`)")
HIGH = 2**63  # Tumult's inverse-CDF sampler asks prng() for 63 bits a step


def _replay(mech, d0=None, d1=None):
    pair = mech.default_pair if d0 is None else (d0, d1)
    return replay_pair(mech, *pair, seed=np.random.SeedSequence(0))


@needs_tumult
def test_the_bits_tumult_samples_from_are_recorded_at_prng_and_the_release_moves_by_the_answer_alone(built):
    r = _replay(built("tumult_laplace"))
    assert r.tape and all(d.method == "randint" and d.arguments["arg1"] == HIGH for d in r.tape) and not r.divergences()
    assert r.release1 - r.release0 == pytest.approx(1.0, abs=1e-9)  # the answers 0 and 1, the same bits


@needs_tumult
def test_an_answer_further_away_moves_the_release_as_far_with_the_bits_frozen(built):
    r = _replay(built("tumult_laplace"), np.array([0.0]), np.array([5.0]))
    assert not r.divergences() and r.sensitivity().l1 == pytest.approx(5.0, abs=1e-9)


@needs_tumult
def test_the_gaussian_s_bits_release_replays_as_bits_moving_by_the_answer(built):
    r = _replay(built("tumult_gaussian_bits"))
    assert r.tape and all(d.method == "randint" for d in r.tape) and not r.divergences()
    assert from_bits(np.asarray(r.release1)) - from_bits(np.asarray(r.release0)) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("kind", ["count", "sum", "average", "quantile", "grouped_count", "clipped_sum"])
def test_every_spark_kind_of_core_and_analytics_declares_why_and_the_measurements_on_a_number_do_not(kind):
    mech = dataclasses.replace(blackbox(lambda d, rng: 0.0, epsilon=1.0, name="tumult"),
                               sampler=ta.Requests(None, kind, {}, records=True))
    with pytest.raises(NotReplayable, match=r"^Mechanism 'tumult' cannot be replayed: .*Spark's Python workers"):
        replay_pair(mech, [0.0], [1.0], seed=np.random.SeedSequence(0))
    assert all(ta.Requests(None, k, {}, records=False).not_replayable is None for k in ta.REPLAYED)
