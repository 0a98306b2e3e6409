"""Every registered mechanism states its record domain and refuses, in one sentence naming the record, data outside it.

The mechanisms are read from the registry, so a new built-in joins by
itself. Each is fed its own default pair with one record of d1 made NaN,
±inf, out of its declared range, of the wrong type (text; a float where
integers are declared) or, in both datasets, of the wrong shape (each
record doubled): every such pair is refused with an `InvalidParameterError`
of one sentence that names the record, and the default pair itself is still
accepted. The domains' own checks (`dpaudit.mechanisms.records`) are
tested against the definition: finite, in range, of the declared shape and type.
"""

import math

import numpy as np
import pytest
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import check_pair, get_mechanism, list_mechanisms
from dpaudit.mechanisms.datasets import records_of_pair
from dpaudit.mechanisms.neighbours import by_relation, domain_of, records_in
from dpaudit.mechanisms.records import BoxRecords, CategoryRecords, NumberRecords, VectorRecords
from dpaudit.mechanisms.registry import registration
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = [name for name in list_mechanisms() if registration(name).ready()]  # a library environment is built once, not here


def _domain(mech):
    return mech.records or domain_of(mech.neighbours)


def _pair(name):
    mech = get_mechanism(name)
    d0, d1 = records_of_pair(*mech.default_pair)
    return mech, d0, d1


def _refused(mech, d0, d1, words):
    """Assert check_pair refuses (d0, d1) with one sentence holding `words`."""
    with pytest.raises(InvalidParameterError) as info:
        check_pair(mech, d0, d1)
    message = str(info.value)
    assert words in message, message
    assert "\n" not in message and message.endswith(".") and message.count(". ") == 0, message


def _with(d, index, value):
    """Return a float (or object) copy of `d` whose record `index` holds `value` in its first entry."""
    out = d.astype(object if isinstance(value, str) else float)
    flat = out.reshape(len(out), -1)
    flat[index, 0] = value
    return out


def _out_of_range(domain):
    """Return a value outside the declared range, or None when the domain has none (a vector of any finite numbers)."""
    if isinstance(domain, CategoryRecords):
        return domain.count
    if isinstance(domain, (NumberRecords, BoxRecords)):
        return domain.high + 1 if math.isfinite(domain.high) else (domain.low - 1 if math.isfinite(domain.low) else None)
    return None


@pytest.mark.parametrize("name", NAMES)
def test_the_default_pair_is_accepted(name):
    mech = get_mechanism(name)
    check_pair(mech, *mech.default_pair)


@pytest.mark.parametrize("name", NAMES)
def test_the_domain_is_declared(name):
    mech = get_mechanism(name)
    assert _domain(mech) is not None, f"{name} declares no record domain"


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(data=st.data())
def test_nan_and_infinities_are_refused_by_record(name, data):
    mech, d0, d1 = _pair(name)
    nan_is_null = mech.null_record is not None and np.all(np.isnan(np.asarray(mech.null_record, dtype=float)))
    value = data.draw(st.sampled_from([math.inf, -math.inf] + ([] if nan_is_null else [math.nan])))
    index = data.draw(st.integers(0, len(d1) - 1))
    _refused(mech, d0, _with(d1, index, value), f"record {index} of d1")


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(data=st.data())
def test_records_out_of_range_or_of_the_wrong_type_are_refused_by_record(name, data):
    mech, d0, d1 = _pair(name)
    domain = _domain(mech)
    assert domain is not None, f"{name} declares no record domain"
    integer = isinstance(domain, CategoryRecords) or getattr(domain, "integer", False)
    outside = _out_of_range(domain)
    choices = ["text"] + ([0.5] if integer else []) + ([] if outside is None else [outside])
    kind = data.draw(st.sampled_from(choices))
    index = data.draw(st.integers(0, len(d1) - 1))
    bad = _with(d1, index, "a") if kind == "text" else _with(d1, index, kind)
    _refused(mech, d0, bad, f"record {index} of d1")


@pytest.mark.parametrize("name", NAMES)
def test_records_of_the_wrong_shape_are_refused(name):
    mech, d0, d1 = _pair(name)
    _refused(mech, np.stack([d0, d0], axis=-1), np.stack([d1, d1], axis=-1), "record 0 of d0")


def _integer_names():
    """Return the registered names whose declared records are integers."""
    domains = {name: _domain(get_mechanism(name)) for name in NAMES}
    return [n for n, d in domains.items() if isinstance(d, CategoryRecords) or getattr(d, "integer", False)]


@pytest.mark.parametrize("name", _integer_names())
def test_a_float_record_where_integers_are_declared_is_refused(name):
    mech, d0, d1 = _pair(name)
    _refused(mech, d0.astype(float), d1.astype(float), "a float")


@SETTINGS
@given(low=st.floats(-1e6, 1e6), span=st.floats(1e-3, 1e6), x=st.floats(allow_nan=True, allow_infinity=True),
       width=st.sampled_from([1, 3]))
def test_a_box_holds_exactly_its_finite_numbers_of_its_width(low, span, x, width):
    box = BoxRecords(low, low + span, width)
    record = np.full(width, x)
    inside = math.isfinite(x) and box.low <= x <= box.high
    assert (box.check_records(record[None, :], "d0") is None) == inside
    assert (box.check_records(np.stack([record, record], axis=-1)[None], "d0") is None) is False  # wrong shape
    if width == 1:
        assert (box.check_records(np.array([x]), "d0") is None) == inside  # a number is a record of width 1


@SETTINGS
@given(values=st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=6), norm=st.floats(0.1, 10))
def test_a_vector_record_must_be_finite_and_a_vector(values, norm):
    spec = VectorRecords(norm=norm)
    d = np.array([values])
    assert (spec.check_records(d, "d1") is None) == all(math.isfinite(v) for v in values)
    assert spec.check_records(np.array(values), "d1") is not None  # numbers, not vectors


def test_categories_are_integers_in_range_and_the_null_record_passes():
    spec = CategoryRecords(3)
    assert spec.check_records(np.array([0, 1, 2]), "d0") is None
    assert "record 1 of d0 is 3" in spec.check_records(np.array([0, 3]), "d0")
    assert "a float" in spec.check_records(np.array([0.0, 1.0]), "d0")
    assert spec.check_records(np.array([0, -1]), "d0", null_record=-1) is None
    assert "True" in spec.check_records(np.array([True]), "d0")


def test_a_declared_domain_reaches_the_relation_check_and_blackbox_records():
    from dpaudit.mechanisms import blackbox

    check = by_relation("add-remove", 0.0, records=BoxRecords(0.0, 1.0))
    assert domain_of(check) == BoxRecords(0.0, 1.0)
    assert "record 1 of d1 is NaN" in check(np.array([0.0, 0.0]), np.array([0.0, np.nan]))
    assert check(np.array([0.0, 0.0]), np.array([0.0, 1.0])) is None
    mech = blackbox(lambda d, rng: 0.0, epsilon=1.0, null_record=0.0, records=BoxRecords(0.0, 1.0))
    _refused(mech, [0.0], [0.0, 5.0], "record 1 of d1 is 5.0")
    _refused(mech, [[0.0, 0.0]], [[0.0, 0.0], [1.0, 1.0]], "record 0 of d0")
    check_pair(mech, [0.0], [0.0, 1.0])


def test_records_in_keeps_infinite_bounds_open_to_finite_numbers_only():
    check = records_in(-math.inf, math.inf)
    assert check(np.array([1e300]), np.array([-1e300])) is None
    assert "inf" in check(np.array([0.0]), np.array([math.inf]))
