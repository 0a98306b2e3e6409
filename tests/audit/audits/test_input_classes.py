"""The six ways ordinary input made dpaudit certify a violation that was not there, each closed by construction.

Each test plays its class on mechanisms and data of its own (not the
reproductions that found it): the audit is refused in one sentence, or it
runs and stays consistent, and the same machinery still flags a real leak.
"""

import numpy as np
import pandas as pd
import pytest
from dpaudit.attacks.games import MultiRun, OneRun
from dpaudit.audit import audit_canaries, audit_mechanism
from dpaudit.audit.estimators.certify import Bound
from dpaudit.audit.theory.upper_bound import theory_upper_bound
from dpaudit.mechanisms import InvalidParameterError, blackbox
from dpaudit.mechanisms.records import BoxRecords, CategoryRecords


def shifted_sum(data, rng, size):
    """Each record adds clip(x, 0, 2) − 1 ∈ [−1, 1]: add-remove sensitivity 1, Laplace(1.5): 2/3-DP; a 0 record adds −1."""
    return np.sum(np.clip(np.asarray(data, dtype=float), 0, 2) - 1.0) + rng.laplace(0.0, 1.5, size)


def test_a_users_function_has_no_null_record_unless_it_declares_one():
    mech = blackbox(shifted_sum, epsilon=1.0)
    with pytest.raises(InvalidParameterError, match=r"one record more.*relation='replace-one'.*null_record") as refused:
        audit_mechanism(mech, [0.0, 2.0], [2.0, 2.0], trials=20_000, seed=1)
    assert "\n" not in str(refused.value)
    assert audit_mechanism(mech, [2.0], [2.0, 0.0], trials=200_000, seed=1).verdict == "consistent"
    replaced = blackbox(shifted_sum, epsilon=1.0, relation="replace-one")  # a replaced record moves the sum by 2: 4/3-DP
    assert audit_mechanism(replaced, [0.0], [2.0], trials=200_000, seed=1).verdict == "violation"


def test_named_columns_are_matched_by_name():
    mech = blackbox(lambda d, rng: float(np.sum(d["income"])) + rng.laplace(0.0, 4.0), epsilon=1.0)
    d0 = pd.DataFrame({"income": [2.0, 0.0], "region": [0.0, 2.0]})
    # By position one record was added; by name every record changed.
    shuffled = pd.DataFrame({"region": [2.0, 0.0, 5.0], "income": [0.0, 2.0, 1.0]})
    with pytest.raises(InvalidParameterError, match="one must be the other with one record added or removed"):
        audit_mechanism(mech, d0, shuffled, trials=20_000, seed=0)
    with pytest.raises(InvalidParameterError, match=r"their columns differ \(only in d0: region; only in d1: zip\)"):
        audit_mechanism(mech, d0, {"income": [2.0, 0.0, 1.0], "zip": [0.0, 0.0, 0.0]}, trials=20_000, seed=0)
    added = {"region": [0.0, 2.0, 5.0], "income": [2.0, 0.0, 1.0]}  # the same columns in another order, one record added
    assert audit_mechanism(mech, d0, added, trials=50_000, seed=0).verdict == "consistent"


@pytest.mark.parametrize("answer_false", [False, np.False_])
def test_a_check_answering_false_refuses_the_pair(answer_false):
    check = lambda a, b: answer_false if np.sum(a != b) > 1 else True  # noqa: E731
    mech = blackbox(lambda d, rng, size: np.sum(d) + rng.laplace(0, 1.5, size), epsilon=1.0, relation="replace-one",
                    neighbours=check)
    with pytest.raises(InvalidParameterError, match="its neighbour check answered False"):
        audit_mechanism(mech, [0.0, 0.0, 0.0], [1.0, 1.0, 1.0], trials=20_000, seed=0)
    assert audit_mechanism(mech, [0.0, 0.0, 0.0], [0.0, 0.0, 1.0], trials=50_000, seed=0).verdict == "consistent"


def bounded_mean_of_three(data, rng, size):
    """Mean of three records in [−1, 1] + Laplace(1): 2/3-DP under replace-one (the mean moves by 2/3 at most)."""
    return np.mean(np.asarray(data, dtype=float).reshape(3, -1)[:, 0]) + rng.laplace(0.0, 1.0, size)


def test_canaries_are_made_only_from_declared_records():
    pair = (np.array([[-1.0], [0.0], [0.0]]), np.array([[1.0], [0.0], [0.0]]))
    undeclared = blackbox(bounded_mean_of_three, epsilon=1.0, relation="replace-one", default_pair=pair)
    with pytest.raises(InvalidParameterError, match=r"declares no records.*canary='pair'"):
        audit_canaries(undeclared, game=MultiRun(5000), canary="fixed", seed=2)
    assert audit_canaries(undeclared, game=MultiRun(20_000), seed=2).verdict == "consistent"  # auto: the pair

    outside = blackbox(bounded_mean_of_three, epsilon=1.0, relation="replace-one", default_pair=pair,
                       records=BoxRecords(-1.0, 1.0), neighbours=lambda a, b: len(a) == 3 and bool(np.all(np.abs(a) <= 1)))
    with pytest.raises(InvalidParameterError, match="datasets with and without the canary are not neighbours"):
        audit_canaries(outside, game=MultiRun(5000), seed=2)  # 100 base records + 1: not the three records it takes


def test_declared_box_records_give_canaries_inside_the_box_that_a_leak_still_shows():
    def leaky_sum(data, rng, size):  # records in [0, 1], claimed 1-DP with a tenth of the noise
        return np.sum(data) + rng.laplace(0.0, 0.1, size)

    def honest_sum(data, rng, size):
        return np.sum(data) + rng.laplace(0.0, 1.5, size)

    in_range = lambda a, b: bool(np.all((a >= 0) & (a <= 1)) and np.all((b >= 0) & (b <= 1)))  # noqa: E731
    for fn, verdict in ((leaky_sum, "violation"), (honest_sum, "consistent")):
        mech = blackbox(fn, epsilon=1.0, relation="replace-one", records=BoxRecords(0.0, 1.0), neighbours=in_range)
        assert audit_canaries(mech, game=MultiRun(20_000), seed=3).verdict == verdict


def test_the_pair_mode_plays_an_add_remove_pair_of_different_lengths():
    mech = blackbox(lambda d, rng, size: np.sum(d) + rng.laplace(0, 1, size), epsilon=1.0,
                    default_pair=([0.0] * 3, [0.0] * 3 + [1.0]))
    assert audit_canaries(mech, game=MultiRun(4000), canary="pair", seed=0).verdict == "consistent"
    leak = blackbox(lambda d, rng, size: len(d["x"]) + rng.laplace(0, 0.1, size), epsilon=1.0,
                    default_pair=({"x": [1, 2]}, {"x": [1, 2, 3]}))
    assert audit_canaries(leak, game=MultiRun(4000), canary="pair", seed=0).verdict == "violation"


def test_category_canaries_stay_in_their_categories():
    def histogram(data, rng, size):
        counts = np.bincount(np.asarray(data, dtype=int), minlength=8).astype(float)
        return counts + rng.laplace(0.0, 2.0, (size, 8))  # replace-one moves two counts: ℓ1 2, Laplace(2): 1-DP

    check = lambda a, b: bool(np.isin(a, range(8)).all() and np.isin(b, range(8)).all())  # noqa: E731
    mech = blackbox(histogram, epsilon=1.0, relation="replace-one", records=CategoryRecords(8), neighbours=check)
    assert audit_canaries(mech, game=OneRun(7), seed=4).verdict == "consistent"


def test_a_black_box_claim_bounds_nothing_below_its_delta():
    mech = blackbox(lambda d, rng: 0.0, epsilon=1.0, delta=0.01)
    assert theory_upper_bound(mech, 0.0).epsilon == np.inf
    assert theory_upper_bound(mech, 0.01).epsilon == 1.0 and theory_upper_bound(mech, 0.05).epsilon < 1.0
    pair = blackbox(lambda d, rng, size: np.sum(d) + rng.laplace(0, 1, size), epsilon=1.0, delta=0.01,
                    default_pair=([0.0], [0.0, 1.0]))
    res = audit_canaries(pair, game=MultiRun(1000), bound=Bound(delta=0.0), seed=0)
    assert res.upper_bound.epsilon == np.inf and res.to_dict()["upper_bound"]["epsilon"] is None


def test_a_replace_one_claim_on_a_dpsgd_loop_is_refused():
    pytest.importorskip("torch")
    from dpaudit.audit import UserTrainer, audit_dpsgd
    from dpaudit.mechanisms import Claim

    x, y = np.random.default_rng(0).random((10, 4)), np.arange(10) % 2
    target = UserTrainer(train=lambda x, y, rng: rng.normal(size=(3, 10)), losses=lambda w, x, y: np.zeros(len(y)), x=x, y=y,
                         claim=Claim(1.0, 1e-5, "replace-one"))
    with pytest.raises(InvalidParameterError, match="add-remove step"):
        audit_dpsgd(target=target, canary="crafted", runs=10)
