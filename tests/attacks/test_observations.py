"""Observations: validation, JSON/npz round trips (never pickle), stratified split."""

import json

import numpy as np
import pytest
from dpaudit.attacks.observations import Observations
from dpaudit.errors import DPAuditError


def _random_obs(seed: int, size: int = 50) -> Observations:
    rng = np.random.default_rng(seed)
    return Observations(scores=rng.normal(size=size), truth=rng.random(size) < 0.5)


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_save_load_round_trip_is_exact(tmp_path, suffix):
    obs = _random_obs(0)
    loaded = Observations.load(obs.save(tmp_path / f"obs{suffix}"))
    assert loaded.scores.dtype == float and loaded.truth.dtype == bool
    np.testing.assert_array_equal(loaded.scores, obs.scores)
    np.testing.assert_array_equal(loaded.truth, obs.truth)


def test_json_form_is_plain_lists(tmp_path):
    path = Observations(scores=[0.5, -1.0], truth=[1, 0]).save(tmp_path / "o.json")
    data = json.loads(path.read_text())
    assert data["scores"] == [0.5, -1.0] and data["truth"] == [True, False]


def test_npz_with_pickled_objects_is_refused(tmp_path):
    path = tmp_path / "evil.npz"
    np.savez(path, scores=np.array([{"a": 1}], dtype=object), truth=np.array([True]))
    with pytest.raises(DPAuditError):
        Observations.load(path)


@pytest.mark.parametrize(
    "scores, truth",
    [
        ([1.0, 2.0], [True]),
        ([1.0, np.nan], [True, False]),
        ([], []),
        ([1.0, 2.0], [0, 2]),
        ([[1.0, 2.0]], [[True, False]]),
        (["a", "b"], [True, False]),
    ],
)
def test_invalid_observations_raise_one_sentence(scores, truth):
    with pytest.raises(DPAuditError) as info:
        Observations(scores=scores, truth=truth)
    assert info.value.args[0].endswith(".") and "\n" not in info.value.args[0]


def test_bad_file_names_and_contents_raise(tmp_path):
    obs = _random_obs(1)
    with pytest.raises(DPAuditError):
        obs.save(tmp_path / "obs.pkl")
    with pytest.raises(DPAuditError):
        Observations.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(DPAuditError):
        Observations.load(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(DPAuditError):
        Observations.load(tmp_path / "list.json")


def test_arrays_are_read_only_and_classes_counted():
    obs = Observations.from_in_out([3.0, 2.0, 1.0], [0.0])
    assert (obs.n_in, obs.n_out, obs.size) == (3, 1, 4)
    np.testing.assert_array_equal(obs.in_scores, [3.0, 2.0, 1.0])
    with pytest.raises(ValueError):
        obs.scores[0] = 9.0
    with pytest.raises(DPAuditError):
        Observations.from_in_out([1.0, 2.0], []).require_both_classes("Test")


def test_split_is_stratified_disjoint_and_reproducible():
    obs = _random_obs(2, size=1001)
    sel, est = obs.split(np.random.default_rng(5), 0.3)
    assert sel.size + est.size == obs.size
    assert abs(sel.n_in - 0.3 * obs.n_in) <= 0.5 and abs(sel.n_out - 0.3 * obs.n_out) <= 0.5
    np.testing.assert_array_equal(np.sort(np.concatenate([sel.scores, est.scores])),
                                  np.sort(obs.scores))
    again, _ = obs.split(np.random.default_rng(5), 0.3)
    np.testing.assert_array_equal(again.scores, sel.scores)
    with pytest.raises(DPAuditError):
        obs.split(np.random.default_rng(0), 1.0)
