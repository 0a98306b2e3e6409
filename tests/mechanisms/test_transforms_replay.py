"""A transform keeps a truthful replay answer: an inner `not_replayable` reason is kept by every transform; an inner
library that replays in its own environment (`replay`) is replayed through by `group` and `copies` (no draws of their
own) and refused in one sentence by `compose`, `subsample` and `shuffle` (their runs or draws are not in its replay);
an inner sampler drawing from the rng it is handed is replayed through, the transform's draws with it.

The library side is played in process by mechanisms/scripts/replay_side.py (numpy only), as in
tests/attacks/test_replay_elsewhere.py.
"""

import dataclasses
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from dpaudit.attacks.replay import NotReplayable, replay_pair
from dpaudit.mechanisms import blackbox
from dpaudit.mechanisms.transforms import compose, copies, group, shuffle, subsample

SCRIPT = Path(__file__).resolve().parents[2] / "mechanisms" / "scripts" / "replay_side.py"
_spec = importlib.util.spec_from_file_location("replay_side", SCRIPT)
side = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(side)

PAIR = (np.array([0.0, 1.0]), np.array([1.0, 1.0]))  # replace-one: the first record moves by 1


def clipped_sum(d, rs):
    return float(np.clip(np.asarray(d, float), 0, 1).sum()) + rs.laplace(0.0, 1.0)


class Library:
    """A sampler that draws from a RandomState and replays as a library's side process does (`replay`)."""

    def __call__(self, data, size, rng):
        rs = np.random.RandomState(int(rng.integers(2**31)))
        return np.array([clipped_sum(data, rs) for _ in range(size)])

    def replay(self, d0, d1, rng):
        return json.loads(side.replay(lambda rs: clipped_sum(d0, rs), lambda rs: clipped_sum(d1, rs), int(rng.integers(2**31))))


def _inner(sampler):
    mech = blackbox(lambda d, rng: 0.0, epsilon=1.0, name="inner", relation="replace-one", default_pair=PAIR)
    return dataclasses.replace(mech, sampler=sampler)


def _in_rust(data, size, rng):
    return np.zeros(size)


_in_rust.not_replayable = "its noise is drawn in Rust"

TRANSFORMS = {
    "compose": lambda m: compose(m, 2), "subsample": lambda m: subsample(m, 0.5), "shuffle": lambda m: shuffle(m, 2),
    "group": lambda m: group(m, 2), "copies": lambda m: copies(m, 2),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_every_transform_keeps_the_inner_reason_for_not_replaying(name):
    mech = TRANSFORMS[name](_inner(_in_rust))
    with pytest.raises(NotReplayable, match=r"cannot be replayed: its noise is drawn in Rust; [^.]*\.$"):
        replay_pair(mech, *PAIR, seed=np.random.SeedSequence(0))


@pytest.mark.parametrize("name,what", [("compose", "the 2 runs of its composition"),
                                       ("subsample", "the subsample's own draws"), ("shuffle", "the reports of the other users")])
def test_a_transform_with_runs_or_draws_of_its_own_around_a_library_replay_says_why_it_cannot(name, what):
    mech = TRANSFORMS[name](_inner(Library()))
    with pytest.raises(NotReplayable, match=rf"it wraps 'inner', which replays only in its own environment .*{what}"):
        replay_pair(mech, *PAIR, seed=np.random.SeedSequence(0))


def test_copies_and_group_replay_through_the_library_on_the_data_they_give_it():
    grouped = group(_inner(Library()), 2)  # two records moved by 1 each: the frozen noise leaves a move of 2
    r = replay_pair(grouped, *grouped.default_pair, seed=np.random.SeedSequence(0))
    assert r.sensitivity().l1 == pytest.approx(2.0) and not r.divergences()
    r = replay_pair(copies(_inner(Library()), 3), *PAIR, seed=np.random.SeedSequence(0))  # the moved record copied 3 times
    assert r.sensitivity().l1 == pytest.approx(3.0) and not r.divergences()
    assert [d.method for d in r.tape] == ["laplace"]


def test_a_transform_of_a_sampler_that_draws_from_its_rng_is_replayed_with_the_transform_s_own_draws():
    inner = blackbox(lambda d, rng: float(np.sum(d)) + rng.laplace(0.0, 1.0), epsilon=1.0, name="sum",
                     relation="replace-one", default_pair=PAIR)
    r = replay_pair(compose(inner, 3), *PAIR, seed=np.random.SeedSequence(0))
    assert [d.method for d in r.tape] == ["laplace"] * 3 and r.sensitivity().l1 == pytest.approx(3.0)
    r = replay_pair(subsample(inner, 0.5), *PAIR, seed=np.random.SeedSequence(0))
    assert r.tape[0].method == "random" and not r.divergences()


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_every_transform_keeps_the_law_of_the_released_noise_its_inner_sampler_declares(name):
    def weights(data, size, rng):  # not the value plus its draw: a replay must not lay the move over it
        return np.array([3.0 * (float(np.sum(data)) + rng.normal(0.0, 1.0)) for _ in range(size)])

    weights.released_noise = False
    mech = subsample(_inner(weights), 1.0) if name == "subsample" else TRANSFORMS[name](_inner(weights))  # q = 1: kept
    pair = mech.default_pair or PAIR
    found = replay_pair(mech, *pair, seed=np.random.SeedSequence(0)).sensitivity()
    assert found.l1 > 0 and found.unpriced and found.gaussian_mu == 0.0
