"""Outputs as black boxes return them: mixed dtypes, text rows, None and non-finite numbers, malformed pairs."""

import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from dpaudit.attacks.distinguish import distinct_outputs
from dpaudit.attacks.features import common_dtype, row_keys
from dpaudit.audit import audit_mechanism
from dpaudit.errors import DPAuditError, MechanismError
from dpaudit.mechanisms import blackbox
from dpaudit.mechanisms.neighbours import unchecked
from dpaudit.mechanisms.outputs import NONFINITE, check_outputs


def test_equal_rows_share_a_key_in_their_common_dtype():
    ints, floats, signed_zero = np.array([[0, 1]]), np.array([[0.0, 1.0]]), np.array([[-0.0, 1.0]], dtype=np.float32)
    a, b = common_dtype(ints, floats)
    c, d = common_dtype(signed_zero, floats)
    assert row_keys(a)[0] == row_keys(b)[0] == row_keys(c)[0] == row_keys(d)[0]
    assert distinct_outputs(ints, floats) == 1
    assert distinct_outputs(np.array([["q1", "no"]]), np.array([["q1", "yes"], ["q1", "no"]])) == 2


def test_a_correct_mechanism_is_not_flagged_when_one_dataset_holds_ints_and_the_other_floats():
    p = np.exp(0.25) / (1 + np.exp(0.25))  # randomized response on each of 8 bits: ε = 8 · 0.25 = 2

    def bits(data, rng, size):
        data = np.asarray(data)
        return np.where(rng.random((size, len(data))) < p, data, 1 - data)

    # The claim covers this pair, 8 records apart, so the caller vouches for it (`unchecked`).
    mech = blackbox(bits, epsilon=2.0, default_pair=([0] * 8, [1.0] * 8), relation="replace-one", neighbours=unchecked)
    assert audit_mechanism(mech, trials=100_000, seed=0).lower_bound.epsilon <= 2.0


def test_non_finite_numbers_and_none_are_outputs():
    out = check_outputs("m", [np.nan, np.inf, -np.inf, None, 1.5], 5)
    assert out.tolist() == [NONFINITE, NONFINITE, -NONFINITE, NONFINITE, 1.5]
    leak = blackbox(lambda d, rng: np.nan if d[0] and rng.random() < 0.05 else float(rng.laplace()),
                    epsilon=1.0, relation="replace-one", default_pair=([0], [1]))
    result = audit_mechanism(leak, trials=20_000, seed=0)
    assert result.verdict == "violation"  # D1 alone shows NaN: ε is infinite


@pytest.mark.parametrize("fn, message", [
    (lambda data, rng, size: None, r"returned None \(does the function forget to return its output\?\) where a batch"),
    (lambda data, rng: (i for i in data), r"returned a generator; return numbers, strings or arrays of them"),
])
def test_what_is_not_an_output_is_one_sentence(fn, message):
    with pytest.raises(MechanismError, match=message):
        audit_mechanism(blackbox(fn, epsilon=1.0, relation="replace-one", default_pair=([0], [1])), trials=1000, seed=0)


@pytest.mark.parametrize("pair", [([0], [1], [2]), 5, "ab"])
def test_a_malformed_default_pair_is_one_sentence(pair):
    with pytest.raises(DPAuditError, match=r"^The default_pair of mechanism 'f' must be two datasets \(d0, d1\); got "):
        blackbox(lambda data, rng: 0.0, epsilon=1.0, name="f", default_pair=pair)


def test_only_a_parameter_named_size_makes_a_function_batched():
    def per_call(data, rng, **options):
        return float(rng.laplace() + data[0])

    result = audit_mechanism(blackbox(per_call, epsilon=1.0, relation="replace-one", default_pair=([0.0], [1.0])), trials=2000, seed=0)
    assert result.lower_bound.trials == 2000


def test_a_call_that_raises_is_an_output_and_a_function_that_always_raises_stops_the_audit():
    def flaky(data, rng):
        if rng.random() < 0.01 * (1 + 9 * data[0]):  # fails ten times as often on D1: that alone leaks ε = log(10)
            raise RuntimeError("transient failure")
        return float(rng.laplace(0.0, 100.0))

    result = audit_mechanism(blackbox(flaky, epsilon=1.0, relation="replace-one", default_pair=([0], [1])), trials=50_000, seed=0)
    assert result.verdict == "violation" and result.lower_bound.epsilon <= np.log(10)

    def broken(data, rng):
        raise RuntimeError("no")

    with pytest.raises(MechanismError, match=r"raised RuntimeError: no"):
        audit_mechanism(blackbox(broken, epsilon=1.0, relation="replace-one", default_pair=([0], [1])), trials=1000, seed=0)


def test_tuples_of_text_and_numbers_are_audited_as_numbers():
    out = check_outputs("m", [("count", 1.5), ("count", -2.0)], 2)
    assert out.dtype == np.float64 and out[:, 1].tolist() == [1.5, -2.0] and out[0, 0] == out[1, 0]
    leak = blackbox(lambda d, rng: ("count", float(np.sum(d) + rng.laplace(0.0, 0.1))), epsilon=1.0,
                    relation="replace-one", default_pair=([0], [1]))
    assert audit_mechanism(leak, trials=20_000, seed=0).verdict == "violation"  # true ε = 10


def test_each_element_maps_to_the_same_number_whatever_else_is_in_its_batch():
    mixed, numbers = check_outputs("m", ["none", 1, None], 3), check_outputs("m", [1, 2, 3], 3)
    assert mixed[1] == numbers[0] == 1.0 and mixed[2] == NONFINITE
    assert check_outputs("m", ["none", 2.5], 2)[0] == check_outputs("m", [("none", 1)], 1)[0, 0]


def test_integers_of_any_size_fractions_and_decimals_are_numbers_in_their_order():
    out = check_outputs("m", [2**70, 2**71, 7, Fraction(1, 3), Decimal("2.5"), -(2**2000)], 6)
    assert out[0] < out[1] and out[2] == 7.0 and out[3] == 1 / 3 and out[4] == 2.5 and out[5] == -NONFINITE


def test_a_leak_carried_by_integers_beyond_two_to_the_63_is_certified():
    leak = blackbox(lambda d, rng: int(np.sum(d)) * 2**64 + int(rng.integers(0, 2**62)), epsilon=1.0,
                    relation="replace-one", default_pair=([0], [1]))
    assert audit_mechanism(leak, trials=2000, seed=0).verdict == "violation"


def test_float32_outputs_with_infinities_map_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = check_outputs("m", np.array([[np.inf, 1.0], [-np.inf, np.nan]], dtype=np.float32), 2)
    assert out.dtype == np.float64 and out.tolist() == [[NONFINITE, 1.0], [-NONFINITE, NONFINITE]]
