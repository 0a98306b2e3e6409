"""Integer outputs of an external mechanism stay integers, exactly: a double's bit pattern sent as JSON keeps its low bits.

A `--command` program that releases the IEEE-754 bit patterns of a
textbook float Laplace (Mironov's low-bits leak) as JSON integers must be
audited as the same function run through `--python` (.npy replies, uint64)
is: with the same seeds the two give the same outputs, so the same bound.
Read as floats, those integers lost their low bits and the leak went unseen.
"""

import sys
import textwrap

import numpy as np
import pytest
from dpaudit.audit import audit_mechanism
from dpaudit.mechanisms.external import external, external_python
from dpaudit.mechanisms.external.processes import json_integers

TRIALS = 100_000

LEAK = textwrap.dedent("""
    import numpy as np

    def bits(data, rng, size):
        return (np.sum(data) + rng.laplace(0.0, 1.0, size)).view(np.uint64)
""")

SERVE = textwrap.dedent("""
    import json, sys
    import numpy as np
    from leak import bits

    for line in sys.stdin:
        request = json.loads(line)
        out = bits(np.asarray(request["data"], dtype=float), np.random.default_rng(request["seed"]), request["size"])
        print(json.dumps({"outputs": out.tolist()}), flush=True)
""")


@pytest.fixture
def leak_folder(tmp_path):
    (tmp_path / "leak.py").write_text(LEAK)
    (tmp_path / "serve.py").write_text(SERVE)
    return tmp_path


def test_json_integers_keep_64_bits_and_their_sign():
    patterns = np.array([0.5, -0.5, -1e-300, 3.0]).view(np.uint64)
    read = json_integers(patterns.tolist())
    assert read.dtype == np.uint64 and np.array_equal(read, patterns)  # -0.5's pattern is beyond 2^63
    assert json_integers([[1, -2], [3, 4]]).dtype == np.int64
    assert json_integers([1, 2.0]) is None and json_integers([True, 1]) is None and json_integers([-1, 2**64 - 1]) is None


def test_a_command_releasing_bit_patterns_is_certified_as_the_python_path(leak_folder, monkeypatch):
    monkeypatch.chdir(leak_folder)
    with external([sys.executable, str(leak_folder / "serve.py")], epsilon=1.0) as command, \
            external_python(sys.executable, "leak:bits", epsilon=1.0) as python:
        by_command = audit_mechanism(command, trials=TRIALS, seed=0)
        by_python = audit_mechanism(python, trials=TRIALS, seed=0)
    assert by_python.verdict == "violation"
    assert by_command.verdict == "violation"
    assert by_command.lower_bound.epsilon == pytest.approx(by_python.lower_bound.epsilon, rel=1e-12)
