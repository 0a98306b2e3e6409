"""User functions the project has never seen, audited through `blackbox` + `audit_mechanism`."""

import numpy as np
import pytest
from dpaudit.audit import audit_mechanism
from dpaudit.mechanisms import MechanismError, blackbox


def laplace_sum(scale):
    def fn(data, rng):
        return float(np.sum(data) + rng.laplace(0.0, scale))

    return fn


def gaussian_vector(data, rng, size=None):
    """N(0, I) noise on the dataset's one record, a vector."""
    record = np.asarray(data, float)[0]
    shape = (size, len(record)) if size is not None else (len(record),)
    return record + rng.normal(0.0, 1.0, shape)


def coin(data, rng):
    """Binary randomized response returning strings, ln 3-DP for the first record."""
    keep = rng.random() < 0.75
    bit = data[0] if keep else 1 - data[0]
    return "yes" if bit else "no"


@pytest.mark.parametrize("seed", [0, 1])
def test_correct_scalar_function_is_not_flagged(seed):
    mech = blackbox(laplace_sum(1.0), epsilon=1.0, null_record=0.0, name="user-laplace")
    res = audit_mechanism(mech, [0.0], [1.0], trials=20_000, seed=seed)
    assert res.verdict == "consistent"
    assert 0.5 < res.lower_bound.epsilon <= 1.0


@pytest.mark.parametrize("seed", [0, 1])
def test_wrong_scalar_function_is_flagged(seed):
    # Laplace noise of scale 1/3 on a sensitivity-1 sum is 3-DP, not 1-DP.
    mech = blackbox(laplace_sum(1 / 3), epsilon=1.0, null_record=0.0, name="user-laplace-too-little-noise")
    res = audit_mechanism(mech, [0.0], [1.0], trials=20_000, seed=seed)
    assert res.verdict == "violation"
    assert res.lower_bound.epsilon <= 3.0


def test_vector_function_with_size_is_batched_and_flagged():
    # N(0, I) noise on a vector moving by (1, 1, 1, 1) in every coordinate: ℓ2 shift 2, μ = 2 GDP,
    # whose ε at δ = 1e-5 is about 7.0, far above the claimed 1.
    mech = blackbox(gaussian_vector, epsilon=1.0, null_record=0.0, delta=1e-5, name="user-vector")
    res = audit_mechanism(mech, np.zeros((1, 4)), np.ones((1, 4)), trials=100_000, seed=0)
    assert res.verdict == "violation"


def test_categorical_outputs_certify_close_to_log3():
    mech = blackbox(coin, epsilon=np.log(3), name="coin", relation="replace-one")
    res = audit_mechanism(mech, [0], [1], trials=20_000, seed=0)
    assert res.verdict == "consistent"
    assert 0.8 * np.log(3) < res.lower_bound.epsilon <= np.log(3)
    assert res.test in ("output is 'yes'", "output is 'no'")


def test_text_test_names_only_this_audits_texts():
    """A test on three texts names the texts it rejects, never texts another audit of the process released."""
    audit_mechanism(blackbox(coin, epsilon=np.log(3), relation="replace-one"), [0], [1], trials=2_000, seed=0)

    def shifted(data, rng, size):
        draws = rng.integers(0, 3, size) + (data[0] * (rng.random(size) < 0.9))
        return np.array(["low", "mid", "high"])[np.minimum(draws, 2)]

    res = audit_mechanism(blackbox(shifted, epsilon=1.0, relation="replace-one"), [0], [1], trials=20_000, seed=0)
    named = res.test.removeprefix("output is one of ").removeprefix("output is ").replace("'", "").split(", ")
    assert set(named) < {"low", "mid", "high"}


@pytest.mark.parametrize(
    "fn, message",
    [
        (lambda data, rng: {"count": 1.0}, "returned a dict; return numbers, strings or arrays"),
        (lambda data, rng: 1 / 0, "raised ZeroDivisionError"),
        (lambda data, rng: np.zeros(int(rng.integers(1, 3))), "changing shape"),
    ],
)
def test_broken_functions_give_one_sentence(fn, message):
    mech = blackbox(fn, epsilon=1.0, null_record=0.0, name="broken")
    with pytest.raises(MechanismError, match=message) as info:
        audit_mechanism(mech, [0.0], [1.0], trials=1000, seed=0)
    assert "'broken'" in str(info.value)
