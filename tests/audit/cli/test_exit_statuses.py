"""Issue 17, items 2, 4 and 5: every failure is one sentence with its own exit status; tracebacks only under --debug."""

import json
import sys

import numpy as np
import pytest
from dpaudit.audit import audit_mechanism
from dpaudit.audit.cli import main
from dpaudit.mechanisms import MechanismError, blackbox
from dpaudit.mechanisms.outputs import check_outputs

USER_MECHANISMS = '''
import sys
import numpy as np
from dpaudit.mechanisms import blackbox

PAIR = ([0.0], [1.0])

def _bytes(data, rng):
    return bytes([0xff, 0xfe, int(rng.integers(0, 2))])

def _huge(data, rng, size):
    return 1e78 * (np.sum(data) + rng.laplace(0.0, 1.0, (size, 3)))

def _exits(data, rng):
    sys.exit()

def _exits_nonzero(data, rng):
    sys.exit(1)

def _narrows(data, rng, size):
    width = 3 if size < 50_000 else 2
    return np.sum(data) + rng.laplace(0.0, 1.0, (size, width))

def _widens(data, rng, size):
    width = 3 if size < 50_000 else 4
    return np.sum(data) + rng.laplace(0.0, 1.0, (size, width))

def _complex_leak(data, rng, size):
    return rng.laplace(0.0, 1.0, size) + 1j * (5 * np.sum(data) + rng.laplace(0.0, 1.0, size))

def _memory(data, rng, size):
    raise MemoryError()

def _chatty(data, rng, size):
    print("debug: drawing", size)
    return np.sum(data) + rng.laplace(0.0, 1.0, size)

bytes_out = blackbox(_bytes, epsilon=1.0, null_record=0.0, default_pair=PAIR)
huge = blackbox(_huge, epsilon=1.0, null_record=0.0, default_pair=PAIR)
exits = blackbox(_exits, epsilon=1.0, null_record=0.0, default_pair=PAIR)
exits_nonzero = blackbox(_exits_nonzero, epsilon=1.0, null_record=0.0, default_pair=PAIR)
narrows = blackbox(_narrows, epsilon=1.0, null_record=0.0, default_pair=PAIR)
widens = blackbox(_widens, epsilon=1.0, null_record=0.0, default_pair=PAIR)
complex_leak = blackbox(_complex_leak, epsilon=1.0, null_record=0.0, default_pair=PAIR)
memory = blackbox(_memory, epsilon=1.0, null_record=0.0, default_pair=PAIR)
chatty = blackbox(_chatty, epsilon=1.0, null_record=0.0, default_pair=PAIR)
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "edge_mechs.py").write_text(USER_MECHANISMS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "edge_mechs"
    sys.modules.pop("edge_mechs", None)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_sentence(err):
    return "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "attr, status, words",
    [
        ("bytes_out", 0, None),  # bytes that are not UTF-8 are outputs like any other (a code of the bytes)
        ("huge", 1, None),  # values near 1e78 are clipped to a fixed large number, not NaN features
        ("exits", 3, "raised SystemExit"),
        ("exits_nonzero", 3, "raised SystemExit"),
        ("narrows", 3, "outputs must keep one shape"),
        ("widens", 3, "outputs must keep one shape"),
        ("memory", 3, "MemoryError: it ran out of memory"),
    ],
)
def test_user_mechanisms_end_with_their_status_and_one_sentence(capsys, user_module, attr, status, words):
    code, out, err = run(capsys, "audit", f"{user_module}:{attr}", "--trials", "200000", "--json", "--quiet")
    assert code == status, err
    if words:
        assert words in err and one_sentence(err)
    else:
        assert json.loads(out)["verdict"] == ("violation" if status == 1 else "consistent")


def test_a_leak_in_the_imaginary_part_is_found(capsys, user_module):
    code, out, _ = run(capsys, "audit", f"{user_module}:complex_leak", "--trials", "200000", "--json", "--quiet")
    assert code == 1 and json.loads(out)["lower_bound"]["epsilon"] > 1.0


def test_complex_outputs_are_two_real_coordinates():
    out = check_outputs("m", np.array([1 + 2j, 3 - 4j]), 2)
    assert out.tolist() == [[1.0, 2.0], [3.0, -4.0]]


def test_debug_adds_the_traceback(capsys, user_module):
    code, _, err = run(capsys, "--debug", "audit", f"{user_module}:exits", "--trials", "1000", "--quiet")
    assert code == 3 and "Traceback" in err
    code, _, err = run(capsys, "audit", f"{user_module}:exits", "--trials", "1000", "--quiet", "--debug")
    assert code == 3 and "Traceback" in err


def test_an_internal_error_is_status_3(capsys, monkeypatch):
    import dpaudit.audit.audits.two_dataset as two_dataset

    def broken(*args, **kwargs):
        raise IndexError("index 3 is out of bounds")

    monkeypatch.setattr(two_dataset, "audit_mechanism", broken)  # `dpaudit audit` imports it when it runs
    code, _, err = run(capsys, "audit", "laplace", "--trials", "1000", "--quiet")
    assert code == 3 and "internal error, IndexError: index 3 is out of bounds" in err and one_sentence(err)


@pytest.mark.parametrize(
    "name, content",
    [("bad.json", b'{"scores": [0.5], "truth": [1], "x": "\xff\xfe"}'), ("cut.npz", None)],
)
def test_unreadable_score_files_are_bad_input(capsys, tmp_path, name, content):
    path = tmp_path / name
    if content is None:
        np.savez(path, scores=np.arange(100.0), truth=np.arange(100) % 2)
        content = path.read_bytes()[:-40]
    path.write_bytes(content)
    code, _, err = run(capsys, "canary", "--scores", str(path), "--epsilon", "1")
    assert code == 2 and str(path) in err and one_sentence(err)


def test_save_is_checked_before_the_game_runs(capsys, tmp_path):
    code, _, err = run(capsys, "canary", "laplace", "--save", str(tmp_path / "no-such-dir" / "s.json"))
    assert code == 2 and "does not exist" in err
    code, _, err = run(capsys, "canary", "laplace", "--save", str(tmp_path / "s.txt"))
    assert code == 2 and ".json or .npz" in err


def test_a_narrower_batch_in_python_names_the_shapes():
    def narrows(data, rng, size):
        return rng.laplace(0.0, 1.0, (size, 3 if size < 50_000 else 2))

    with pytest.raises(MechanismError, match=r"shape \(2,\) on d0, where the first batch had \(3,\)"):
        audit_mechanism(blackbox(narrows, epsilon=1.0, null_record=0.0), [0.0], [1.0], trials=200_000, seed=0)


def test_what_a_mechanism_prints_does_not_spoil_the_json(capsys, user_module):
    code, out, err = run(capsys, "audit", f"{user_module}:chatty", "--trials", "10000", "--json", "--quiet")
    assert code == 0 and json.loads(out)["verdict"] == "consistent" and "debug: drawing" in err
