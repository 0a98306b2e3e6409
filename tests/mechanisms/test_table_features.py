"""Tables as releases: exact features of small tables, columns by name, the tabulate transform, and the worst-case pair."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms import blackbox
from dpaudit.mechanisms.base import check_pair
from dpaudit.mechanisms.table_features import TableFeatures, feature_names, table_features, tabulate
from dpaudit.mechanisms.worst_case_tables import TableDomain, selection_pair, spread_pair, worst_case_pair

TABLE = np.array([[1, 1, 1], [1, 1, 0], [0, 0, 0], [1, 0, 1], [2, 1, 1]])


def test_features_of_a_small_table_are_its_exact_counts():
    names = feature_names(["a", "b", "c"])
    got = dict(zip(names, table_features(TABLE, {"a": 1, "b": 1, "c": 1})))
    # Rows equal to (1, 1, 1): the first; all but one attribute equal: rows 0, 1, 3, 4.
    assert got == {"rows": 5, "exact": 1, "near": 4, "a": 3, "b": 3, "c": 3, "a&b": 2, "a&c": 2, "b&c": 2,
                   "a&b&c": 1, "closeness": 0}
    # (0, 0, 1) is in no row; the nearest rows, (0, 0, 0) and (1, 0, 1), differ in one attribute.
    assert table_features(TABLE, [0, 0, 1], ways=1).tolist() == [5, 0, 2, 1, 2, 3, -1]


def test_a_data_frame_is_read_by_column_name_and_an_empty_table_is_far():
    frame = pd.DataFrame(TABLE[:, ::-1], columns=["c", "b", "a"])
    assert np.array_equal(table_features(frame, {"a": 1, "b": 1, "c": 1}), table_features(TABLE, [1, 1, 1]))
    assert table_features(np.empty((0, 3)), [1, 1, 1]).tolist() == [0] * 10 + [-3]
    with pytest.raises(MechanismError, match="without the column 'z'"):
        TableFeatures({"a": 1, "z": 1})(frame)
    with pytest.raises(InvalidParameterError, match="1, 2 or 3"):
        TableFeatures([1, 1], ways=4)


def test_categories_written_as_text_compare_as_values():
    table = np.array([["x", "y"], ["x", "z"]])
    assert table_features(table, ["x", "z"]).tolist() == [2, 1, 2, 2, 1, 1, 0]


def test_tabulate_releases_each_table_s_features_and_keeps_the_claim():
    def generator(data, rng):
        return np.asarray(data)[rng.integers(0, len(data), 4)]

    domain = TableDomain.uniform(2, 3)
    mech = blackbox(generator, epsilon=1.0, default_pair=worst_case_pair(domain, 3), neighbours=domain.neighbours())
    tab = tabulate(mech, domain.target())
    out = tab.sample(mech.default_pair[1], 50, np.random.default_rng(0))
    assert out.shape == (50, len(feature_names(domain.columns)))
    assert np.all(out[:, 0] == 4) and np.all(out[:, 1] == out[:, -2])  # 2 columns: exact = the two-way count
    assert tab.claim == mech.claim and "table features" in tab.params["release"]
    zero = tab.sample(mech.default_pair[0], 50, np.random.default_rng(0))
    assert np.all(zero[:, 1] == 0)  # the target is not in d0, so no copy of it is released


def test_a_batch_that_is_not_tables_is_one_sentence():
    mech = tabulate(blackbox(lambda data, rng, size: np.zeros((size, 2, 3, 4)), epsilon=1.0), [1, 1, 1])
    with pytest.raises(MechanismError, match="table of shape"):
        mech.sample(np.zeros((2, 3)), 2, np.random.default_rng(0))


def test_worst_case_pair_adds_a_target_that_shares_no_value_and_passes_the_check():
    domain = TableDomain(("age", "zip"), (3, 4))
    d0, d1 = worst_case_pair(domain, 5)
    assert d1.shape == (6, 2) and np.array_equal(d1[-1], [2, 3])
    assert not np.any(d0 == d1[-1])  # no other record shares any of the target's values
    mech = blackbox(lambda d, rng: 0.0, epsilon=1.0, neighbours=domain.neighbours())
    check_pair(mech, d0, d1)
    with pytest.raises(InvalidParameterError, match="3 in column 'age', whose codes are 0 .. 2"):
        check_pair(mech, d0, np.vstack([d0, [3, 3]]))
    with pytest.raises(InvalidParameterError, match="not neighbours"):
        check_pair(mech, d0, np.vstack([d0, [2, 3], [2, 3]]))


def test_the_replace_one_worst_case_pair_replaces_a_base_record_by_the_target():
    domain = TableDomain.uniform(2, 3)
    d0, d1 = worst_case_pair(domain, 4, relation="replace-one")
    assert len(d0) == len(d1) == 4 and np.array_equal(d1[-1], [2, 2]) and np.array_equal(d0[:-1], d1[:-1])
    check_pair(blackbox(lambda d, rng: 0.0, epsilon=1.0, relation="replace-one", neighbours=domain.neighbours("replace-one")),
               d0, d1)
    with pytest.raises(InvalidParameterError, match="'add-remove' or 'replace-one'"):
        worst_case_pair(domain, 4, relation="swap")


def test_the_selection_pair_puts_the_target_s_cell_above_the_independent_estimate_for_same_parity_columns_only():
    domain = TableDomain.uniform(4, 3)
    d0, d1 = selection_pair(domain, 9)
    assert len(d1) == 10 and np.array_equal(d1[-1], [2, 2, 2, 2]) and np.array_equal(d0, d1[:-1])
    check_pair(blackbox(lambda d, rng: 0.0, epsilon=1.0, neighbours=domain.neighbours()), d0, d1)
    hits = d0 == domain.target()
    for i, j in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]:
        cell, independent = np.sum(hits[:, i] & hits[:, j]), len(d0) * hits[:, i].mean() * hits[:, j].mean()
        assert (cell >= independent + 1) if (i - j) % 2 == 0 else (cell + 1 <= independent)
    with pytest.raises(InvalidParameterError, match="TableDomain"):
        selection_pair((4, 2), 10)


def test_the_spread_pair_varies_every_base_column_over_the_non_target_categories_and_adds_an_outlier_target():
    domain = TableDomain(("a", "b"), (3, 4))
    d0, d1 = spread_pair(domain, 7)
    assert len(d1) == 8 and np.array_equal(d1[-1], [2, 3]) and np.array_equal(d0, d1[:-1])
    assert [sorted(set(d0[:, j])) for j in range(2)] == [[0, 1], [0, 1, 2]]  # every category but the target's
    check_pair(blackbox(lambda d, rng: 0.0, epsilon=1.0, neighbours=domain.neighbours()), d0, d1)
    with pytest.raises(InvalidParameterError, match="at least 3 categories in every column"):
        spread_pair(TableDomain.uniform(3, 2), 10)
