"""audit_replay on the published classes of bugs, written here: each flagged by the replay and certified on fresh
draws; the correct twin of each shape never flagged and never certified; unrecorded noise named, not passed."""

import json

import numpy as np
import pytest
from dpaudit.attacks.replay import NotReplayable
from dpaudit.audit import ReplayResult, audit_replay
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import blackbox

EPS = 1.0
D0, D1 = [0.2, 0.9, 0.4], [0.2, 0.9, 0.4, 1.0]
N_PUBLIC = 3
LABELS = ("a", "b", "c")
LOW = HIGH = 1.0  # a hyperparameter pair that makes the stated sensitivity HIGH − LOW zero


def mean_private_n(d, rng):
    return np.clip(d, 0, 1).sum() / len(d) + rng.laplace(0, 1 / (len(d) * EPS))


def mean_public_n(d, rng):
    return np.clip(d, 0, 1).sum() / N_PUBLIC + rng.laplace(0, 1 / (N_PUBLIC * EPS))


def counts_of_seen_labels(d, rng):
    return {k: float(np.sum(np.asarray(d) == k)) + rng.laplace(0, 1 / EPS) for k in np.unique(d)}


def counts_of_declared_labels(d, rng):
    return {k: float(np.sum(np.asarray(d) == k)) + rng.laplace(0, 1 / EPS) for k in LABELS}


def raw_sum(d, rng):
    return np.sum(d) + rng.laplace(0, 1 / EPS)


def clipped_sum(d, rng):
    return np.clip(d, 0, 1).sum() + rng.laplace(0, 1 / EPS)


def zero_sensitivity(d, rng):
    return rng.laplace(np.clip(d, 0, 1).sum(), (HIGH - LOW) / EPS)


def nan_through_clip(d, rng):
    return np.clip(np.asarray(d, float), 0, 1).sum() + rng.laplace(0, 1 / EPS)


def nan_dropped(d, rng):
    return np.clip(np.nan_to_num(np.asarray(d, float), nan=0.0), 0, 1).sum() + rng.laplace(0, 1 / EPS)


def two_charged_as_one(d, rng):
    s = np.clip(d, 0, 1).sum()
    return np.array([s + rng.laplace(0, 1 / EPS), s + rng.laplace(0, 1 / EPS)])


def two_charged_as_two(d, rng):
    s = np.clip(d, 0, 1).sum()
    return np.array([s + rng.laplace(0, 2 / EPS), s + rng.laplace(0, 2 / EPS)])


BIG = [0.2, 0.9, 0.4, 10.0]
LABELLED = (["a", "b", "a"], ["a", "b", "a", "c"])
WITH_NAN = ([0.2, 0.9], [0.2, 0.9, float("nan")])
CASES = [  # (bug, its correct twin, the pair)
    (mean_private_n, mean_public_n, ([0.0], [0.0, 1.0])),
    (counts_of_seen_labels, counts_of_declared_labels, LABELLED),
    (raw_sum, clipped_sum, (D0, BIG)),
    (zero_sensitivity, clipped_sum, (D0, D1)),
    (nan_through_clip, nan_dropped, WITH_NAN),
    (two_charged_as_one, two_charged_as_two, (D0, D1)),
]


@pytest.mark.parametrize("bug, twin, pair", CASES, ids=[c[0].__name__ for c in CASES])
def test_each_published_class_is_flagged_and_certified_and_its_correct_twin_is_neither(bug, twin, pair):
    found = audit_replay(blackbox(bug, epsilon=EPS), *pair, seed=1)
    assert found.replay.flagged == 1 and found.verdict == "violation"
    assert found.replay.certified[0].findings
    fine = audit_replay(blackbox(twin, epsilon=EPS), *pair, seed=1)
    assert fine.replay.flagged == 0 and fine.verdict == "consistent"


def test_the_verdict_follows_the_certificate_and_the_json_adds_replay_to_an_audit_s_keys():
    res = audit_replay(blackbox(two_charged_as_one, epsilon=EPS), D0, D1, trials=2000, seed=0)
    assert isinstance(res, ReplayResult)
    out = json.loads(json.dumps(res.to_dict()))
    assert {"mechanism", "claim", "upper_bound", "lower_bound", "verdict", "seed", "replay"} <= set(out)
    [pair] = out["replay"]["certified"]
    assert pair["implied_epsilon"] == pytest.approx(2 * EPS) and pair["lower_bound"]["epsilon"] == res.lower_bound.epsilon
    assert res.verdict == ("violation" if res.lower_bound.epsilon > EPS else "consistent")


def test_a_pair_search_screens_the_generated_neighbours_and_certifies_at_most_certify_of_them():
    mech = blackbox(nan_through_clip, epsilon=EPS, default_pair=(D0, D1))
    res = audit_replay(mech, search=True, certify=2, trials=5000)
    assert res.replay.screened > 1 and 1 <= len(res.replay.certified) <= 2
    assert all(c.share == pytest.approx(1 / len(res.replay.certified)) for c in res.replay.certified)
    assert res.verdict == "violation" and res.lower_bound.confidence == 0.95


def test_noise_from_numpy_s_global_state_is_named_not_passed():
    mech = blackbox(lambda d, rng: np.clip(d, 0, 1).sum() + np.random.laplace(0, 1 / EPS), epsilon=EPS)
    with pytest.raises(NotReplayable, match="numpy's global random state"):
        audit_replay(mech, D0, D1)


@pytest.mark.parametrize("kwargs, words", [({"certify": 0}, "certify"), ({"trials": 3}, "trials"),
                                           ({"confidence": 1.5}, "confidence"), ({"search": True}, "not both")])
def test_bad_input_is_one_sentence(kwargs, words):
    with pytest.raises(InvalidParameterError, match=words):
        audit_replay(blackbox(clipped_sum, epsilon=EPS), D0, D1, **kwargs)


def test_noise_from_a_generator_of_the_function_s_own_is_named_not_passed():
    hidden = np.random.Generator(np.random.PCG64(7))
    mech = blackbox(lambda d, rng: np.clip(d, 0, 1).sum() + hidden.laplace(0, 1 / EPS), epsilon=EPS)
    with pytest.raises(NotReplayable, match="a source besides the rng"):
        audit_replay(mech, D0, D1)
