"""recertify on a result of audit_replay: each certificate certified again at its share of β, the largest kept."""

import dataclasses

import numpy as np
import pytest
from dpaudit.audit import Bound, audit_replay, recertify
from dpaudit.mechanisms import blackbox

EPS = 1.0
D0, D1 = [0.2, 0.9, 0.4], [0.2, 0.9, 0.4, 1.0]


def raw_sum(d, rng):  # claims sensitivity 1 (records in [0, 1]) and never clips
    return float(np.sum(d)) + rng.laplace(0, 1 / EPS)


@pytest.fixture(scope="module")
def several():
    res = audit_replay(blackbox(raw_sum, epsilon=EPS, default_pair=(D0, D1)), search=True, certify=3, trials=4000, seed=2)
    assert len(res.replay.certified) == 3 and res.selection is not None and res.evidence is None
    return res


def _bounds(res):
    return [c.result.lower_bound for c in res.replay.certified]


def test_the_same_bound_gives_the_same_bound_and_certificates(several):
    again = recertify(several, Bound(confidence=0.95))
    assert again.lower_bound.epsilon == several.lower_bound.epsilon and again.verdict == several.verdict
    assert [b.epsilon for b in _bounds(again)] == [b.epsilon for b in _bounds(several)]
    assert again.recertified.first_bound == several.bound


def test_each_certificate_pays_its_share_of_the_new_beta_and_the_largest_is_kept(several):
    again = recertify(several, Bound(confidence=0.99))
    shares = [c.share for c in again.replay.certified]
    assert sum(shares) <= 1.0 + 1e-12
    assert [b.confidence for b in _bounds(again)] == pytest.approx([1 - 0.01 * s for s in shares])
    assert all(new.epsilon <= old.epsilon for new, old in zip(_bounds(again), _bounds(several)))
    assert again.lower_bound.epsilon == max(b.epsilon for b in _bounds(again))
    assert again.lower_bound.confidence == 0.99 and again.selection.kept == int(np.argmax([b.epsilon for b in _bounds(again)]))
    assert again.to_dict()["replay"]["certified"][0]["lower_bound"]["confidence"] == pytest.approx(1 - 0.01 * shares[0])


def test_a_single_certificate_is_certified_again_at_all_of_beta_and_its_report_follows():
    res = audit_replay(blackbox(raw_sum, epsilon=EPS), D0, [0.2, 0.9, 0.4, 6.0], trials=4000, seed=0)
    again = recertify(res, Bound(confidence=0.99))
    [certificate] = again.replay.certified
    assert certificate.result.lower_bound.confidence == again.lower_bound.confidence == 0.99
    assert certificate.result.lower_bound.epsilon == again.lower_bound.epsilon <= res.lower_bound.epsilon
    assert again.evidence is not None and dataclasses.replace(again, recertified=None) != res
