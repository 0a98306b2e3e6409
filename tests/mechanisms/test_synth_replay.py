"""Replay of the synthetic-data adapters: DataSynthesizer's PrivBayes recorded and replayed at its one interception
point, the process's global sources routed to the replay's state (mechanisms/scripts/synth_replay_side.py), its noise
sized by the categories the data hold found as draws of another size; SmartNoise Synth (noise drawn by OpenDP in Rust)
refused in one sentence. Marked `libraries`: each builds its environment on first use."""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.attacks.replay import NotReplayable, replay_pair
from dpaudit.mechanisms import get_mechanism

pytestmark = pytest.mark.libraries


def _replay(mech):
    return replay_pair(mech, *mech.default_pair, seed=np.random.SeedSequence(0))


def test_privbayes_draws_are_recorded_and_its_noise_sized_by_the_data_s_categories_is_a_divergence():
    mech = get_mechanism("synth_privbayes", sample_rows=40)
    try:
        r = _replay(mech)
    finally:
        mech.sampler.generator.sampler.replayer.close()
    assert {"laplace", "choice"} <= {d.method for d in r.tape}
    sized = [d for d in r.divergences() if d.kind == "size" and d.recorded.startswith("laplace")]
    assert sized  # D holds one category per column, D′ the target's too: more noisy counts on D′ (S1)
    assert r.release0.shape == r.release1.shape and r.release0[0] == r.release1[0] == 40  # the features of 40 rows


@pytest.mark.parametrize("name", ["synth_mst", "synth_aim", "synth_mwem", "synth_mst_white_box"])
def test_smartnoise_synth_is_refused_in_one_sentence_naming_opendp(name):
    with pytest.raises(NotReplayable, match=rf"^Mechanism '{name}' cannot be replayed: SmartNoise Synth .*OpenDP's samplers"):
        _replay(get_mechanism(name))
