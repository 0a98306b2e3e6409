"""A replay made in a library's own environment (mechanisms/scripts/replay_side.py, read back by attacks/replay/elsewhere.py):
the RandomState a library is handed records and replays its draws, differences are divergences, a source the state does
not reach is named; and a sampler that declares its noise out of reach is refused in one sentence.

The side module needs numpy only, so these tests load it here by path and play the side's part in process (`SideLike`),
as the diffprivlib side does in its environment (tests/mechanisms/test_diffprivlib_replay.py, marked `libraries`).
"""

import dataclasses
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from dpaudit.attacks.replay import DataDerivedShape, Divergence, NotReplayable, Sensitivity, replay_pair
from dpaudit.audit import audit_replay
from dpaudit.audit.audits.replay import implied_epsilon
from dpaudit.mechanisms import blackbox

SCRIPT = Path(__file__).resolve().parents[2] / "mechanisms" / "scripts" / "replay_side.py"
_spec = importlib.util.spec_from_file_location("replay_side", SCRIPT)
side = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(side)

EPS = 1.0
D0, D1 = [0.2, 0.9, 0.4], [0.2, 0.9, 0.4, 1.0]


class SideLike:
    """A sampler that calls `fn(data, rs)` with a numpy RandomState and replays as a library's side process does."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, data, size, rng):
        rs = np.random.RandomState(int(rng.integers(2**31)))
        return np.array([self.fn(data, rs) for _ in range(size)])

    def replay(self, d0, d1, rng):
        record = side.replay(lambda rs: self.fn(d0, rs), lambda rs: self.fn(d1, rs), int(rng.integers(2**31)))
        return json.loads(record)


def _mechanism(fn):
    return dataclasses.replace(blackbox(lambda d, rng: 0.0, epsilon=EPS, name=fn.__name__), sampler=SideLike(fn))


def _replay(fn, d0=D0, d1=D1):
    return replay_pair(_mechanism(fn), d0, d1, seed=np.random.SeedSequence(0))


def clipped_sum(d, rs):
    return float(np.clip(d, 0, 1).sum()) + rs.laplace(0.0, 1 / EPS)


def mean_private_n(d, rs):
    return float(np.clip(d, 0, 1).sum()) / len(d) + rs.laplace(0.0, 1 / (len(d) * EPS))


def noise_per_record(d, rs):  # as many draws as records: the data steers the control flow
    return float(sum(x + rs.laplace(0.0, 1.0) for x in np.clip(d, 0, 1)))


def shuffled_first(d, rs):
    return float(rs.permutation(np.asarray(d, float))[0]) + rs.laplace(0.0, 1 / EPS)


def global_noise(d, rs):
    return float(np.sum(d)) + np.random.laplace(0.0, 1.0)


def own_generator(d, rs):
    return float(np.sum(d)) + np.random.default_rng().laplace(0.0, 1.0)


def test_the_draws_on_d_are_recorded_and_replayed_on_d1_the_release_moving_by_the_data_alone():
    r = _replay(clipped_sum)
    assert [d.method for d in r.tape] == ["laplace"] and not r.divergences()
    assert r.release1 - r.release0 == pytest.approx(1.0, abs=1e-12)
    found = r.sensitivity()  # not priced there: no run more checks that the release moves with the noise under it
    assert isinstance(found, Sensitivity) and found.unpriced == ("laplace",) and found.pure_epsilon == 0.0
    mech = _mechanism(clipped_sum)
    mech.sampler.released_noise = {"method": "laplace", "scale": 1 / EPS}  # the law the side's adapter declares
    found = replay_pair(mech, D0, D1, seed=np.random.SeedSequence(0)).sensitivity()
    assert found.unpriced == () and found.pure_epsilon == pytest.approx(1.0, abs=1e-9)


def test_a_scale_computed_from_the_data_is_a_divergence_of_law_and_more_draws_one_of_count():
    [law] = _replay(mean_private_n).divergences()
    assert law.kind == "law" and "scale" in law.recorded
    kinds = [d.kind for d in _replay(noise_per_record).divergences()]
    assert kinds == ["count"]


def test_draws_on_data_are_replayed_as_indices_applied_to_each_run_s_items():
    moved = _replay(shuffled_first, D0, [x + 1.0 for x in D0])  # the same order taken from items one larger
    assert not moved.divergences() and moved.tape[0].arguments["x"] == 3
    assert moved.release1 - moved.release0 == pytest.approx(1.0, abs=1e-12)
    assert _replay(shuffled_first).divergences()[0].kind == "size"  # four items on D′ against three on D


@pytest.mark.parametrize("fn, words", [(global_noise, "numpy's global random state"),
                                       (own_generator, "a source besides the random state")])
def test_noise_from_a_source_the_state_does_not_reach_is_named_in_one_sentence(fn, words):
    with pytest.raises(NotReplayable, match=words):
        _replay(fn)


def test_a_raise_on_d1_is_a_release_of_its_own():
    def fails_on_four(d, rs):
        if len(d) > 3:
            raise ValueError("too many records")
        return clipped_sum(d, rs)

    r = _replay(fails_on_four)
    assert r.release1 is None and isinstance(r.shape(), DataDerivedShape) and "too many records" in r.shape().describe()


def test_audit_replay_through_the_side_certifies_the_bug_and_not_its_correct_twin():
    found = audit_replay(_mechanism(mean_private_n), [0.0], [0.0, 1.0], trials=20_000, seed=1)
    assert any(isinstance(f, Divergence) for f in found.replay.certified[0].findings) and found.verdict == "violation"
    fine = audit_replay(_mechanism(clipped_sum), [0.0], [0.0, 1.0], trials=20_000, seed=1)
    assert fine.replay.flagged == 1 and fine.replay.certified[0].implied_epsilon is None  # a move not priced is flagged
    assert fine.verdict == "consistent"
    declared = _mechanism(clipped_sum)
    declared.sampler.released_noise = {"method": "laplace", "scale": 1 / EPS}
    fine = audit_replay(declared, [0.0], [0.0, 1.0], trials=20_000, seed=1)
    assert fine.replay.flagged == 0 and fine.verdict == "consistent"


def test_a_sampler_that_declares_its_noise_out_of_reach_is_refused_in_one_sentence():
    def rust(data, size, rng):
        return np.zeros(size)

    rust.not_replayable = "its noise is drawn in Rust"
    mech = dataclasses.replace(blackbox(lambda d, rng: 0.0, epsilon=EPS, name="in-rust"), sampler=rust)
    with pytest.raises(NotReplayable, match=r"^Mechanism 'in-rust' cannot be replayed: its noise is drawn in Rust; [^.]*\.$"):
        audit_replay(mech, D0, D1)


def test_opendp_and_smartnoise_samplers_say_why_they_cannot_be_replayed():
    from dpaudit.mechanisms.adapters.opendp_0_4 import SideSum
    from dpaudit.mechanisms.adapters.smartnoise_sql import Queries

    for sampler in (SideSum(None, {}), Queries(None, "SELECT COUNT(*) FROM t", {})):
        mech = dataclasses.replace(blackbox(lambda d, rng: 0.0, epsilon=EPS, name="library"), sampler=sampler)
        with pytest.raises(NotReplayable, match="cannot be replayed: .*(OpenDP|SmartNoise).* Rust"):
            replay_pair(mech, D0, D1, seed=np.random.SeedSequence(0))


def uniform_laplace(d, rs):  # diffprivlib's way: a Laplace of scale 1/ε made of uniforms the library transforms
    u = rs.random_sample(4)
    return float(np.clip(d, 0, 1).sum()) - (np.log(1 - u[0]) * np.cos(np.pi * u[1]) + np.log(1 - u[2]) * np.cos(np.pi * u[3])) / EPS


def test_a_move_over_uniforms_is_not_priced_unless_the_adapter_declares_the_law_of_its_released_noise():
    mech = _mechanism(uniform_laplace)
    found = replay_pair(mech, D0, D1, seed=np.random.SeedSequence(0)).sensitivity()
    assert found.l1 == pytest.approx(1.0, abs=1e-9) and found.unpriced == ("random_sample",) and not found.shifts
    assert implied_epsilon(found, 0.0) is None  # a reading the record cannot justify is not made
    for law, price in (({"method": "laplace", "scale": 1 / EPS}, EPS), ({"method": "laplace", "scale": 4 / EPS}, EPS / 4)):
        mech.sampler.released_noise = law
        found = replay_pair(mech, D0, D1, seed=np.random.SeedSequence(0)).sensitivity()
        assert found.unpriced == () and implied_epsilon(found, 0.0) == pytest.approx(price, rel=1e-9)


def test_an_unpriced_move_is_flagged_and_certified_black_box_and_the_verdict_follows_the_certificate():
    res = audit_replay(_mechanism(uniform_laplace), [0.0], [0.0, 1.0], trials=20_000, seed=1)
    [pair] = res.replay.certified
    assert res.replay.flagged == 1 and pair.implied_epsilon is None and res.verdict == "consistent"
    assert "implied ε not priced" in " ".join(text for _, text in res.replay.rows())
    assert json.loads(json.dumps(res.to_dict()))["replay"]["certified"][0]["implied_epsilon"] is None
