"""A library's own sources routed to the replay's state (mechanisms/scripts/replay_side.py `routed`, `AsGenerator`):
numpy's global functions and Python's `random` are recorded and replayed, a name bound before the routing is named as
a source the state does not reach, and every name is put back after the run.

The side module needs numpy only, so it is loaded here by path and run in process, as a library's side process runs it.
"""

import importlib.util
import json
import random
from pathlib import Path

import numpy as np
import pytest
from numpy.random import laplace as bound_laplace

SCRIPT = Path(__file__).resolve().parents[2] / "mechanisms" / "scripts" / "replay_side.py"
_spec = importlib.util.spec_from_file_location("replay_side_routed", SCRIPT)
side = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(side)


def library(d):
    """A library as DataSynthesizer writes one: it seeds the global sources, then draws from numpy's and Python's."""
    np.random.seed(0)
    random.seed(0)
    root = random.choice(["a", "b", "c"])
    noise = np.random.laplace(0.0, scale=1.0, size=2)
    picked = int(np.random.choice(list(range(4)), p=[0.25] * 4))
    return [float(np.sum(d)) + float(noise.sum()), root, picked, random.uniform(0.0, 1.0)]


def early_bound(d):
    return float(np.sum(d)) + float(bound_laplace(0.0, 1.0))


def _record(fn, d0, d1, seed=3):
    def run(d):
        def once(state):
            with side.routed(state):
                return fn(d)

        return once

    return json.loads(side.replay(run(d0), run(d1), seed))


def test_numpy_s_global_functions_and_python_s_random_are_recorded_and_replayed():
    record = _record(library, [1.0, 2.0], [1.0, 3.0])
    assert not record["outside"] and not record["divergences"]
    assert {"laplace", "choice", "random_sample", "randint"} <= {d["method"] for d in record["tape"]}
    r0, r1 = record["release0"], record["release1"]
    assert r1[0] - r0[0] == pytest.approx(1.0, abs=1e-12) and r0[1:] == r1[1:]  # the noise and every pick frozen


def test_the_same_record_for_the_same_seed_and_another_for_another():
    assert _record(library, [1.0], [2.0])["tape"] == _record(library, [1.0], [2.0])["tape"]
    assert _record(library, [1.0], [2.0])["tape"] != _record(library, [1.0], [2.0], seed=4)["tape"]


def test_a_name_bound_before_the_routing_draws_from_the_global_state_and_is_named():
    assert "numpy's global random state (np.random.*)" in _record(early_bound, [1.0], [2.0])["outside"]


def test_every_name_is_put_back_after_the_run():
    before = (np.random.laplace, np.random.seed, random.random, random.seed, dict(vars(random._inst)))
    _record(library, [1.0], [2.0])
    assert (np.random.laplace, np.random.seed, random.random, random.seed, dict(vars(random._inst))) == before


def test_the_generator_face_draws_integers_on_the_range_asked_for():
    face = side.AsGenerator(np.random.RandomState(0))
    draws = face.integers(2, 5, size=4000)
    assert set(np.unique(draws)) == {2, 3, 4}
    assert set(np.unique(face.integers(2, 5, size=4000, endpoint=True))) == {2, 3, 4, 5}
    assert 0 <= face.integers(2**63) < 2**63 and 0.0 <= face.random() < 1.0
    with pytest.raises(AttributeError):
        face.normal()  # a Generator method it does not record is an error, never a draw from elsewhere
