"""Property-based tests of the neighbour checks and the data handling, against references written from each relation's definition.

Replace-one: the datasets have one length and differ in at most one record.
Add-remove: one is the other with one record inserted (the others in
order), or, only when a null record is declared, they have one length and
the one differing record is the null record in one of them. Records are
compared as values (NaN equal to NaN), columns of tables by name.
"""

import math

import numpy as np
import pandas as pd
import pytest
from dpaudit.errors import NeighbourAnswerError
from dpaudit.mechanisms import InvalidParameterError, blackbox, check_pair
from dpaudit.mechanisms.datasets import records_of_pair
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NULL = 0
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _same(a, b) -> bool:
    """Records as tuples of Python values; NaN equals NaN."""
    return len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b))


def _as_tuples(data) -> list[tuple]:
    """Return the dataset's records as tuples of Python values, in column-name order for tables."""
    if isinstance(data, pd.DataFrame):
        return [tuple(row) for row in data[sorted(data.columns)].itertuples(index=False)]
    if isinstance(data, dict):
        names = sorted(data)
        return [tuple(np.ravel([data[n][i] for n in names]).tolist()) for i in range(len(data[names[0]]))]
    return [tuple(np.ravel(r).tolist()) for r in np.asarray(data, dtype=object)]


def reference(relation: str, d0, d1, null_record=None) -> bool:
    """Return whether d0 and d1 are neighbours under `relation`, from its definition."""
    a, b = _as_tuples(d0), _as_tuples(d1)
    if len(a) == len(b):
        differ = [i for i in range(len(a)) if not _same(a[i], b[i])]
        if len(differ) == 0 or (relation == "replace-one" and len(differ) == 1):
            return True
        if relation == "add-remove" and len(differ) == 1 and null_record is not None:
            i = differ[0]
            return any(all(v == null_record for v in rec) for rec in (a[i], b[i]))
        return False
    if relation == "replace-one" or abs(len(a) - len(b)) != 1:
        return False
    long, short = (a, b) if len(a) > len(b) else (b, a)
    return any(all(_same(x, y) for x, y in zip(long[:i] + long[i + 1:], short)) for i in range(len(long)))


def accepted(relation: str, d0, d1, null_record=None) -> bool:
    mech = blackbox(lambda d, rng: 0.0, epsilon=1.0, relation=relation, null_record=null_record)
    try:
        check_pair(mech, d0, d1)
    except InvalidParameterError:
        return False
    return True


values = st.one_of(st.integers(-3, 3), st.sampled_from([0.0, 1.5, -2.0, math.nan]))
small_lists = st.lists(values, max_size=6)


@st.composite
def list_pairs(draw):
    """A list and an edit of it: unchanged, one record changed, inserted or removed, or several changed."""
    base = draw(small_lists)
    other = list(base)
    edit = draw(st.sampled_from(["same", "change", "insert", "remove", "two", "null"]))
    if edit == "change" and other:
        other[draw(st.integers(0, len(other) - 1))] = draw(values)
    elif edit == "null" and other:
        other[draw(st.integers(0, len(other) - 1))] = NULL
    elif edit == "insert":
        other.insert(draw(st.integers(0, len(other))), draw(values))
    elif edit == "remove" and other:
        other.pop(draw(st.integers(0, len(other) - 1)))
    elif edit == "two" and len(other) >= 2:
        other[0], other[-1] = draw(values), draw(values)
    return base, other


@SETTINGS
@given(pair=list_pairs(), relation=st.sampled_from(["add-remove", "replace-one"]), null=st.sampled_from([None, NULL]))
def test_lists_are_checked_as_the_relations_define(pair, relation, null):
    d0, d1 = pair
    assert accepted(relation, d0, d1, null) == reference(relation, d0, d1, null)


@SETTINGS
@given(pair=list_pairs(), relation=st.sampled_from(["add-remove", "replace-one"]),
       dtype=st.sampled_from([np.float64, np.float32, object]))
def test_arrays_of_any_dtype_give_the_answer_of_their_values(pair, relation, dtype):
    d0, d1 = pair  # every generated value is exact in float32
    assert accepted(relation, np.asarray(d0, dtype=dtype), np.asarray(d1, dtype=dtype)) == reference(relation, d0, d1)


@st.composite
def table_pairs(draw):
    """Two tables of named columns (vectors allowed in a column), the second in a shuffled column order."""
    names = draw(st.lists(st.sampled_from(["spend", "age", "zip", "w"]), min_size=1, max_size=3, unique=True))
    n = draw(st.integers(0, 4))
    rows = [[draw(st.integers(0, 2)) for _ in names] for _ in range(n)]
    other = [list(r) for r in rows]
    edit = draw(st.sampled_from(["same", "change", "insert", "remove", "two"]))
    if edit == "change" and other:
        other[draw(st.integers(0, n - 1))][draw(st.integers(0, len(names) - 1))] = 7
    elif edit == "insert":
        other.insert(draw(st.integers(0, n)), [5] * len(names))
    elif edit == "remove" and other:
        other.pop(draw(st.integers(0, n - 1)))
    elif edit == "two" and n >= 2:
        other[0][0], other[-1][0] = 8, 9
    shuffled = draw(st.permutations(names))
    return names, rows, other, shuffled


def _table(kind: str, names, rows, order):
    columns = {name: [r[names.index(name)] for r in rows] for name in order}
    return pd.DataFrame(columns, columns=list(order)) if kind == "frame" else {k: np.asarray(v, dtype=np.int64) for k, v in columns.items()}


@SETTINGS
@given(tables=table_pairs(), relation=st.sampled_from(["add-remove", "replace-one"]),
       kind=st.sampled_from(["frame", "dict"]))
def test_tables_are_matched_by_column_name_in_any_order(tables, relation, kind):
    names, rows, other, shuffled = tables
    d0, d1 = _table(kind, names, rows, names), _table(kind, names, other, shuffled)
    assert accepted(relation, d0, d1) == reference(relation, d0, d1)


@SETTINGS
@given(tables=table_pairs())
def test_tables_with_different_column_sets_are_refused_in_one_sentence(tables):
    names, rows, _, _ = tables
    d0 = _table("frame", names, rows, names)
    d1 = d0.assign(extra=0)
    with pytest.raises(InvalidParameterError, match=r"their columns differ \(only in d0: none; only in d1: extra\)\.$"):
        check_pair(blackbox(lambda d, rng: 0.0, epsilon=1.0), d0, d1)


def test_a_structured_array_is_a_table():
    kinds = [("spend", float), ("age", float)]
    d0 = np.array([(0.0, 1.0), (0.0, 1.0)], dtype=kinds)
    d1 = np.array([(1.0, 0.0), (1.0, 0.0)], dtype=[("age", float), ("spend", float)])
    a, b = records_of_pair(d0, d1)
    assert a.tolist() == [[0.0, 1.0], [0.0, 1.0]] and b.tolist() == [[0.0, 1.0], [0.0, 1.0]]


def test_vector_records_in_a_column_are_whole_records():
    d0 = {"v": np.zeros((3, 2)), "k": np.arange(3)}
    d1 = {"k": np.arange(3), "v": np.array([[0.0, 0.0], [0.0, 1.0], [0.0, 0.0]])}
    assert accepted("replace-one", d0, d1) and not accepted("add-remove", d0, d1)


@pytest.mark.parametrize("answer, neighbours", [(True, True), (np.True_, True), (None, True), (False, False),
                                                (np.False_, False), ("too far", False)])
def test_a_neighbour_check_answers_with_a_bool_none_or_a_sentence(answer, neighbours):
    mech = blackbox(lambda d, rng: 0.0, epsilon=1.0, neighbours=lambda a, b: answer)
    if neighbours:
        check_pair(mech, [0.0], [1.0])
    else:
        with pytest.raises(InvalidParameterError, match="not neighbours"):
            check_pair(mech, [0.0], [1.0])


@pytest.mark.parametrize("answer", [0, 1, 1.0, [], np.array([True])])
def test_any_other_answer_is_a_type_error_in_one_sentence(answer):
    mech = blackbox(lambda d, rng: 0.0, epsilon=1.0, neighbours=lambda a, b: answer)
    with pytest.raises(TypeError, match=r"must answer True/False, None or a sentence; it answered") as caught:
        check_pair(mech, [0.0], [1.0])
    assert isinstance(caught.value, NeighbourAnswerError) and "\n" not in str(caught.value)
