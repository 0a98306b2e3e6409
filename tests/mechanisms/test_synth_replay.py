"""Replay of the synthetic-data adapters' tables at each library's one interception point
(mechanisms/scripts/synth_replay_side.py): DataSynthesizer's PrivBayes, whose noise sized by the categories the data
hold shows as draws of another size; SmartNoise's MST, its OpenDP noise recorded at snsynth's primitives, whose table
sized by the input (`sample()`) shows as draws of another size; the white-box releases refused in one sentence.
Marked `libraries`: each builds its environment on first use."""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.attacks.replay import NotReplayable, replay_pair
from dpaudit.mechanisms import get_mechanism

pytestmark = pytest.mark.libraries


def _replay(mech):
    return replay_pair(mech, *mech.default_pair, seed=np.random.SeedSequence(0))


def _replayed(name, **params):
    """Return the replay of the registered table release `name`, its replaying process closed after."""
    mech = get_mechanism(name, **params)
    try:
        return _replay(mech)
    finally:
        mech.sampler.generator.sampler.replayer.close()


def test_privbayes_draws_are_recorded_and_its_noise_sized_by_the_data_s_categories_is_a_divergence():
    r = _replayed("synth_privbayes", sample_rows=40)
    assert {"laplace", "choice"} <= {d.method for d in r.tape}
    sized = [d for d in r.divergences() if d.kind == "size" and d.recorded.startswith("laplace")]
    assert sized  # D holds one category per column, D′ the target's too: more noisy counts on D′ (S1)
    assert r.release0.shape == r.release1.shape and r.release0[0] == r.release1[0] == 40  # the features of 40 rows


def test_mst_records_opendp_s_noise_at_snsynth_s_primitives_and_a_table_sized_by_the_input_diverges():
    r = _replayed("synth_mst_input_size")
    assert "opendp_gaussian" in {d.method for d in r.tape}
    # a draw sized by the input's 10 rows on D meets one sized by 11 on D′ (a shuffle, or the uniforms that follow it,
    # when OpenDP's unseeded noise made D′'s fit draw one more choice before them and the tapes fell out of step)
    by_rows = [d for d in r.divergences() if any(f"{k}10" in d.recorded and f"{k}11" in d.replayed for k in ("x=", "["))]
    assert by_rows, r.divergences()
    assert r.release1[0] - r.release0[0] == 1  # the table's rows: the input's 10 on D, 11 on D′ (S5)


@pytest.mark.parametrize("name", ["synth_mst_white_box", "synth_aim_white_box"])
def test_a_white_box_release_is_refused_in_one_sentence_naming_the_table_release(name):
    with pytest.raises(NotReplayable, match=rf"^Mechanism '{name}' cannot be replayed: its release is a score .*synth_mst"):
        _replay(get_mechanism(name))


def test_mwem_s_laplace_scale_read_from_the_private_row_count_is_a_divergence_of_law():
    r = _replayed("synth_mwem", sample_rows=40)
    laws = [d for d in r.divergences() if d.kind == "law" and d.recorded.startswith("opendp_laplace")]
    assert laws and all("scale=20.0" in d.recorded and "scale=40.0" in d.replayed for d in laws)  # 10 then 20 iterations
