"""Bug-hunter neighbours: every kind generated where it fits, every candidate a neighbour, the hunt pays for its choice."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest
from dpaudit.attacks.neighbour_candidates import KINDS, ROUNDING_RECORDS, candidate_pairs
from dpaudit.audit import audit_mechanism
from dpaudit.audit.cli import main
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import blackbox
from dpaudit.mechanisms.base import check_pair
from dpaudit.mechanisms.datasets import records, records_of_pair
from dpaudit.mechanisms.neighbours import by_relation, records_in
from dpaudit.mechanisms.records import BoxRecords, CategoryRecords, NumberRecords, VectorRecords


def blind(data, rng, size):
    """A release that ignores its input (true ε = 0)."""
    return rng.laplace(0.0, 1.0, size)


def clamp_forgets_upper(data, rng, size):
    """BUGGY: a sum meant to clamp its records to [0, 1] clamps only from below; noise for sensitivity 1."""
    return np.sum(np.maximum(np.asarray(data, float), 0.0)) + rng.laplace(0.0, 1.0, size)


def clamp_sum(data, rng, size):
    """The sum of records clamped to [0, 1], Laplace noise of scale 1: 1-DP under add-remove."""
    return np.sum(np.clip(np.asarray(data, float), 0.0, 1.0)) + rng.laplace(0.0, 1.0, size)


def _any_finite(fn, epsilon: float = 1.0):
    """`fn` taking any finite numbers (it says it clamps them to [0, 1]: its parameters say so), add-remove."""
    mech = blackbox(fn, epsilon=epsilon, neighbours=records_in(-math.inf, math.inf),
                    default_pair=(np.array([0.5, 0.5]), np.array([0.5, 0.5, 1.0])))
    return dataclasses.replace(mech, params={"low": 0.0, "high": 1.0})


SPECS = {
    "box": (dict(records=BoxRecords(0.0, 1.0)), ([0.5, 0.5], [0.5, 0.5, 1.0]),
            {"bounds", "magnitude", "small", "rounding", "filled"}),
    "box-null": (dict(records=BoxRecords(0.0, 1.0, 3), null_record=0.0), None,
                 {"bounds", "magnitude", "small", "rounding", "filled"}),
    "category": (dict(records=CategoryRecords(4)), ([0, 1], [0, 1, 2]), {"bounds", "new-category", "small", "filled"}),
    "vector": (dict(records=VectorRecords(norm=2.0, width=3)), (np.zeros((2, 3)), np.zeros((3, 3))),
               {"bounds", "magnitude", "small", "rounding"}),
    "nan-null": (dict(neighbours=by_relation("add-remove", null_record=np.nan, records=NumberRecords(0.0, 1.0)),
                      null_record=np.nan), ([0.5, 0.5], [0.5, 0.5, 1.0]),
                 {"bounds", "non-finite", "magnitude", "small", "rounding", "filled"}),
    "replace-one": (dict(records=BoxRecords(-1.0, 1.0), relation="replace-one"), ([0.0, 0.0], [0.0, 1.0]),
                    {"bounds", "magnitude", "new-category", "small", "rounding", "filled"}),  # whole numbers may be labels
    "undeclared": (dict(), ([0.0, 1.0], [0.0, 1.0, 1.0]),
                   {"non-finite", "magnitude", "new-category", "small", "rounding", "filled"}),
    "strings": (dict(), (["a", "b"], ["a", "b", "c"]), {"new-category", "small"}),
}


@pytest.mark.parametrize("name", SPECS)
def test_each_spec_gets_its_kinds_and_every_candidate_is_a_neighbour(name):
    given, pair, kinds = SPECS[name]
    mech = blackbox(blind, epsilon=1.0, default_pair=pair, **given)
    found = candidate_pairs(mech, rng=np.random.default_rng(0))
    assert {c.kind for c in found} == kinds
    for c in found:
        check_pair(mech, c.d0, c.d1)  # raises unless they are neighbours for mech
        assert c.note


def test_records_outside_a_declared_domain_are_dropped_and_kept_where_it_admits_them():
    box = blackbox(blind, epsilon=1.0, records=BoxRecords(0.0, 1.0), default_pair=([0.5], [0.5, 1.0]))
    values = np.concatenate([np.concatenate(records_of_pair(c.d0, c.d1)) for c in candidate_pairs(box, rng=np.random.default_rng(0))])
    assert np.all((values >= 0.0) & (values <= 1.0))
    anything = blackbox(blind, epsilon=1.0, default_pair=([0.5], [0.5, 1.0]))
    notes = {c.note for c in candidate_pairs(anything, rng=np.random.default_rng(0))}
    assert {"NaN, inserted last", "+inf, inserted last", "just beyond the upper bound, inserted last"} & notes == \
        {"NaN, inserted last", "+inf, inserted last"}  # no bounds declared: none to be beyond
    bounded = candidate_pairs(_any_finite(blind), rng=np.random.default_rng(0), kinds=["bounds", "non-finite"])
    assert {"just beyond the upper bound, inserted last", "a bound's width beyond the upper bound, inserted last"} <= \
        {c.note for c in bounded}  # the parameters' bounds, in a domain of any finite number
    assert all(c.kind == "bounds" for c in bounded)  # NaN and ±inf are outside every declared domain


@pytest.mark.parametrize("name", [*SPECS, "nan-tool"])
def test_filled_candidates_repeat_no_candidate(name):
    """A filled pair equal to one of another kind is left out: the nan-tool's records at 0 with one at 1 is a "bounds" pair."""
    if name == "nan-tool":
        mech = _nan_tool(blind)
    else:
        given, pair, _ = SPECS[name]
        mech = blackbox(blind, epsilon=1.0, default_pair=pair, **given)
    found = candidate_pairs(mech, rng=np.random.default_rng(0))
    texts = [repr((records(c.d0).tolist(), records(c.d1).tolist())) for c in found]
    filled = [t for c, t in zip(found, texts) if c.kind == "filled"]
    assert not set(filled) & {t for c, t in zip(found, texts) if c.kind != "filled"} and len(set(filled)) == len(filled)


def _nan_tool(fn, epsilon: float = 1.0):
    """`fn` on 5 records in [0, 1] where NaN is a record (a missing value), replace-one, as diffprivlib's nan-tools declare."""
    return blackbox(fn, epsilon=epsilon, relation="replace-one", null_record=np.nan,
                    neighbours=by_relation("replace-one", null_record=np.nan, records=NumberRecords(0.0, 1.0)),
                    default_pair=(np.zeros(5), np.array([1.0, 0.0, 0.0, 0.0, 0.0])))


def nanmean_by_length(data, rng, size):
    """BUGGY: the mean of the values present, noise calibrated to the length of the array with its NaN."""
    x = np.clip(np.asarray(data, float), 0.0, 1.0)
    return np.nanmean(x) + rng.laplace(0.0, 1.0 / x.size, size) if np.any(~np.isnan(x)) else np.full(size, np.nan)


def nan_as_zero_mean(data, rng, size):
    """A missing value counted as 0, then the mean of all n records clamped to [0, 1]: 1-DP under replace-one."""
    x = np.clip(np.nan_to_num(np.asarray(data, float), nan=0.0), 0.0, 1.0)
    return np.mean(x) + rng.laplace(0.0, 1.0 / x.size, size)


def test_filled_datasets_are_of_the_base_length_with_one_record_changed():
    found = candidate_pairs(_nan_tool(blind), rng=np.random.default_rng(0), kinds=["filled"])
    pairs = {(repr(records(c.d0).tolist()), repr(records(c.d1).tolist())) for c in found}
    assert (repr([0.0] + [math.nan] * 4), repr([1.0] + [math.nan] * 4)) in pairs  # NaN-filled, one value present
    assert (repr([math.nan] + [1.0] * 4), repr([0.0] + [1.0] * 4)) in pairs  # filled at a bound, one record missing
    for c in found:
        a, b = records(c.d0), records(c.d1)
        assert len(a) == len(b) == 5 and np.count_nonzero(~((a == b) | (np.isnan(a) & np.isnan(b)))) == 1


def test_the_hunt_flags_a_missing_value_mean_calibrated_to_the_length_from_a_filled_dataset():
    mech = _nan_tool(nanmean_by_length)
    assert audit_mechanism(mech, trials=20_000, seed=0).verdict == "consistent"  # no NaN in the default pair
    res = audit_mechanism(mech, trials=20_000, seed=0, search="hunt")
    assert res.verdict == "violation" and res.phases.pair_search["kind"] == "filled"


@pytest.mark.parametrize("seed", range(3))
def test_the_hunt_on_a_correct_missing_value_mean_is_consistent(seed):
    mech = _nan_tool(nan_as_zero_mean, epsilon=1.25)  # 1-DP, claimed at 1.25: a flag would be the hunt's own doing
    res = audit_mechanism(mech, trials=20_000, seed=seed, search="hunt")
    assert res.verdict == "consistent"
    check_pair(mech, res.phases.pair_search["d0"], res.phases.pair_search["d1"])


def test_small_datasets_and_unseen_categories():
    mech = blackbox(blind, epsilon=1.0, records=CategoryRecords(4), default_pair=([0, 1], [0, 1, 2]))
    found = candidate_pairs(mech, rng=np.random.default_rng(0), kinds=["small", "new-category"])
    sizes = {(len(records(c.d0)), len(records(c.d1))) for c in found if c.kind == "small"}
    assert (0, 1) in sizes and (1, 2) in sizes and (2, 1) in sizes
    unseen = [c for c in found if c.kind == "new-category"]
    assert [records(c.d1)[-1] for c in unseen] == [2]  # the smallest category neither base record has


def test_tables_come_back_as_tables_of_the_same_columns():
    frame = pd.DataFrame({"spend": [1.0, 2.0], "age": [30, 40]})
    mech = blackbox(blind, epsilon=1.0, default_pair=(frame, pd.concat([frame, frame.iloc[:1]], ignore_index=True)))
    found = candidate_pairs(mech, rng=np.random.default_rng(0))
    assert found and all(isinstance(c.d1, pd.DataFrame) and list(c.d1.columns) == ["spend", "age"] for c in found)
    table = {"spend": [1.0, 2.0], "name": ["x", "y"]}
    mech = blackbox(blind, epsilon=1.0, default_pair=(table, {"spend": [1.0, 2.0, 3.0], "name": ["x", "y", "z"]}))
    found = candidate_pairs(mech, rng=np.random.default_rng(0), kinds=["new-category"])
    texts = [c.d1["name"][-1] for c in found if len(c.d1["name"]) == 3]
    assert "" in texts and any(t not in ("x", "y", "") for t in texts)


def test_a_domain_without_a_default_pair_gives_a_base_and_unknown_kinds_are_refused():
    mech = blackbox(blind, epsilon=1.0, records=BoxRecords(0.0, 1.0, 2), null_record=0.0)
    assert candidate_pairs(mech, rng=np.random.default_rng(0), kinds=["bounds"])
    with pytest.raises(InvalidParameterError, match="kinds"):
        candidate_pairs(mech, rng=np.random.default_rng(0), kinds=["nonsense"])
    with pytest.raises(InvalidParameterError, match="no default pair"):
        candidate_pairs(blackbox(blind, epsilon=1.0), rng=np.random.default_rng(0))
    assert set(KINDS) >= {"bounds", "non-finite", "magnitude", "new-category", "small", "rounding"}


@pytest.mark.parametrize("relation, low, high", [("add-remove", 0.0, 1.0), ("add-remove", 0.0, 10.0),
                                                  ("replace-one", -1.0, 1.0), ("replace-one", 0.0, 1000.0)])
def test_a_rounding_pair_moves_a_float_sum_by_more_than_the_sensitivity(relation, low, high):
    """Casacuberta et al. (CCS 2022): numpy's float64 sum of neighbours differs by more than one record can move it."""
    pair = ([0.5], [0.5, high]) if relation == "add-remove" else ([low], [high])
    mech = blackbox(blind, epsilon=1.0, relation=relation, records=BoxRecords(low, high), default_pair=pair)
    first, last = candidate_pairs(mech, rng=np.random.default_rng(0), kinds=["rounding"])[:2]
    assert "first" in first.note and "another order" in last.note
    sensitivity = max(abs(low), abs(high)) if relation == "add-remove" else high - low
    moved = abs(np.sum(np.asarray(first.d1, np.float64)) - np.sum(np.asarray(first.d0, np.float64)))
    assert len(first.d1) >= ROUNDING_RECORDS and moved > sensitivity
    assert np.array_equal(np.sort(first.d1), np.sort(last.d1))  # the same records ...
    assert np.sum(np.asarray(last.d1)) != np.sum(np.asarray(first.d1))  # ... summed in another order, another sum


def test_the_hunt_flags_a_clamp_that_forgets_its_upper_bound_and_reports_the_kind():
    mech = _any_finite(clamp_forgets_upper)
    assert audit_mechanism(mech, trials=50_000, seed=0).verdict == "consistent"  # the default pair stays inside [0, 1]
    res = audit_mechanism(mech, trials=50_000, seed=0, search="hunt")
    found = json.loads(json.dumps(res.to_dict()))["lower_bound"]["pair_search"]
    assert res.verdict == "violation" and found["kind"] in ("bounds", "magnitude") and found["candidates"] > 1
    assert found["trials"] == 25_000


@pytest.mark.parametrize("seed", range(5))
def test_the_hunt_on_a_correct_clamp_is_consistent(seed):
    mech = _any_finite(clamp_sum, epsilon=1.25)  # 1-DP, claimed at 1.25: a flag would be the hunt's own doing
    res = audit_mechanism(mech, trials=50_000, seed=seed, search="hunt")
    assert res.verdict == "consistent"
    check_pair(mech, res.phases.pair_search["d0"], res.phases.pair_search["d1"])


@pytest.mark.parametrize("pair", [([0.0, 1.0], [0.0, 1.0, 1.0]), (np.zeros((2, 3)), np.zeros((3, 3))),
                                  (pd.DataFrame({"a": [1.0], "b": ["x"]}), pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})),
                                  (["a", "b"], ["a", "c"]), ([], [1.0])])
def test_the_hunt_never_flags_a_blind_release(pair):
    relation = "replace-one" if len(records(pair[0])) == len(records(pair[1])) else "add-remove"
    mech = blackbox(blind, epsilon=0.5, relation=relation, default_pair=pair)
    assert audit_mechanism(mech, trials=20_000, seed=0, search="hunt").verdict == "consistent"


def test_hunt_on_the_command_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "huntmech.py").write_text(
        "import dataclasses, math\nimport numpy as np\nfrom dpaudit.mechanisms import blackbox\n"
        "from dpaudit.mechanisms.neighbours import records_in\n"
        "def f(data, rng, size):\n    return np.sum(np.maximum(np.asarray(data, float), 0.0)) + rng.laplace(0, 1, size)\n"
        "mech = blackbox(f, epsilon=1.0, neighbours=records_in(-math.inf, math.inf), default_pair=([0.5], [0.5, 1.0]))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["audit", "huntmech:mech", "--trials", "50000", "--json", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["audit", "huntmech:mech", "--trials", "50000", "--hunt", "--json", "--quiet"]) == 1
    assert json.loads(capsys.readouterr().out)["lower_bound"]["pair_search"]["kind"] in ("bounds", "magnitude")
    assert main(["audit", "huntmech:mech", "--trials", "50000", "--hunt", "--search", "--quiet"]) == 2
    assert "one of them" in capsys.readouterr().err
    with pytest.raises(InvalidParameterError, match="'search'"):
        audit_mechanism(blackbox(blind, epsilon=1.0, default_pair=([0.0], [0.0, 1.0])), trials=1000, search="hunting")


def test_query_answers_are_never_hunted_with_an_added_answer():
    """An added answer is another query, not a neighbour: refused by the check, and never generated."""
    from dpaudit.mechanisms import get_mechanism
    from dpaudit.mechanisms.base import not_neighbours

    mech = get_mechanism("report_noisy_max")
    d0 = np.asarray(mech.default_pair[0], float)
    assert "same queries" in not_neighbours(mech, d0, np.append(d0, 1e308))
    found = candidate_pairs(mech, rng=np.random.default_rng(0))
    assert found and all(len(records(c.d0)) == len(records(c.d1)) for c in found)
