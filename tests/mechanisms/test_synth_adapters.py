"""SmartNoise Synth, DataSynthesizer and dpmm adapters: registered without building anything; claims from their parameters; releases.

Marked `libraries`: the "smartnoise-synth-1.0.8" environment is built on first use (about 30 s with uv once its
wheels are cached; about 6 GB with torch), and "dpmm-0.1.9" for dpmm's (about 30 s). A fit takes seconds, so these tests draw few releases.
"""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import get_mechanism, list_mechanisms
from dpaudit.mechanisms.base import not_neighbours
from dpaudit.mechanisms.table_features import feature_names

GENERATORS = ["synth_mst", "synth_aim", "synth_mwem", "synth_mst_white_box", "synth_aim_white_box",
              "synth_mst_data_domain", "synth_mst_input_size", "synth_privbayes", "synth_privbayes_0_1_4",
              "synth_privbayes_default_seed", "dpmm_mst", "dpmm_privbayes"]


def test_every_generator_is_registered_without_building_anything(tmp_path, monkeypatch):
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path))
    assert set(GENERATORS) <= set(list_mechanisms())
    assert not any(tmp_path.iterdir())


@pytest.mark.libraries
def test_mst_claims_its_parameters_and_releases_the_target_features_of_each_table():
    mech = get_mechanism("synth_mst", epsilon=1.0, delta=1e-2, columns=3, categories=3, rows=10, sample_rows=40)
    assert (mech.claim.epsilon, mech.claim.delta, mech.claim.relation.value) == (1.0, 1e-2, "add-remove")
    d0, d1 = mech.default_pair
    assert not_neighbours(mech, d0, d1) is None and len(d1) == len(d0) + 1
    out = mech.sample(d0, 2, np.random.default_rng(0))
    assert out.shape == (2, len(feature_names(["c0", "c1", "c2"]))) and np.all(out[:, 0] == 40)
    assert mech.params["threat_model"].startswith("black-box")


@pytest.mark.libraries
def test_mst_white_box_releases_one_log_likelihood_ratio_per_fit_on_the_selection_pair():
    mech = get_mechanism("synth_mst_white_box", epsilon=1.0, delta=1e-2, rows=200)
    d0, d1 = mech.default_pair
    assert not_neighbours(mech, d0, d1) is None and len(d1) == 201 and mech.params["dataset"] == "selection"
    out = mech.sample(d0, 3, np.random.default_rng(0))
    assert out.shape == (3,) and np.all(np.isfinite(out)) and np.all(np.abs(out) < 10)
    assert mech.params["threat_model"].startswith("white-box")


def test_mst_white_box_refuses_an_unknown_dataset_in_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path))
    with pytest.raises(InvalidParameterError, match="'dataset' parameter of synth_mst_white_box must be one of selection, outlier"):
        get_mechanism("synth_mst_white_box", dataset="random")
    assert not any(tmp_path.iterdir())


@pytest.mark.libraries
def test_the_input_size_variant_releases_as_many_rows_as_the_input_holds():
    mech = get_mechanism("synth_mst_input_size", rows=7)
    d0, d1 = mech.default_pair
    rng = np.random.default_rng(0)
    assert mech.sample(d0, 1, rng)[0, 0] == 7 and mech.sample(d1, 1, rng)[0, 0] == 8


@pytest.mark.libraries
def test_privbayes_claims_epsilon_for_replacing_a_row_and_its_default_seed_repeats_its_table():
    mech = get_mechanism("synth_privbayes_default_seed", epsilon=1.0, rows=6, sample_rows=30)
    assert (mech.claim.epsilon, mech.claim.delta, mech.claim.relation.value) == (1.0, 0.0, "replace-one")
    d0, d1 = mech.default_pair
    assert not_neighbours(mech, d0, d1) is None and len(d1) == len(d0)
    out = mech.sample(d1, 3, np.random.default_rng(0))
    assert np.all(out == out[0]) and np.all(out[:, 0] == 30)  # seed 0 in every fit: one table, whatever the run


@pytest.mark.libraries
def test_mwem_reads_each_columns_range_from_the_data_so_its_tables_of_d_never_hold_the_target_values():
    mech = get_mechanism("synth_mwem", epsilon=1.0, rows=10, sample_rows=100)
    d0, _ = mech.default_pair
    out = mech.sample(d0, 3, np.random.default_rng(0))
    names = feature_names(["c0", "c1", "c2"])
    # D holds only category 0, so MWEM's histogram has one cell a column (docs/libraries.md S6); an MWEM on the
    # declared 3 categories starts from a uniform histogram and its noisy updates leave the target's cells mass
    assert np.all(out[:, [names.index(c) for c in ("c0", "c1", "c2")]] == 0) and np.all(out[:, 0] == 100)


def test_dpmm_refuses_two_categories_in_one_sentence_without_building_anything(tmp_path, monkeypatch):
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path))
    with pytest.raises(InvalidParameterError, match="'categories' parameter of dpmm_mst"):
        get_mechanism("dpmm_mst", categories=2)  # the spread base needs two categories besides the target's
    assert not any(tmp_path.iterdir())


@pytest.mark.libraries
def test_dpmm_privbayes_claims_its_parameters_on_the_spread_pair_and_releases_the_target_features_of_each_table():
    mech = get_mechanism("dpmm_privbayes", epsilon=1.0, delta=1e-2, rows=6, sample_rows=30)
    assert (mech.claim.epsilon, mech.claim.delta, mech.claim.relation.value) == (1.0, 1e-2, "add-remove")
    d0, d1 = mech.default_pair
    assert not_neighbours(mech, d0, d1) is None and len(d1) == 7 and sorted(set(d0.ravel())) == [0, 1]
    out = mech.sample(d0, 2, np.random.default_rng(0))  # no column of d0 holds one value, so dpmm fits it
    assert out.shape == (2, len(feature_names(["c0", "c1", "c2"]))) and np.all(out[:, 0] == 30)
    assert mech.params["dataset"] == "spread" and mech.params["environment"] == "dpmm-0.1.9"
