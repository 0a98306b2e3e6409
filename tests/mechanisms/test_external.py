"""Mechanisms in another process (`dpaudit.mechanisms.external`): audits through the protocol, and every way a process can break it."""

import gc
import os
import pickle
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from dpaudit.audit import audit_mechanism
from dpaudit.mechanisms import InvalidParameterError, MechanismError, UnknownMechanismError
from dpaudit.mechanisms.external.processes import ExternalMechanism, external, external_python, unit_sum_pair

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="external mechanisms need a Unix system")

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
SERVE = ["sh", str(EXAMPLES / "serve.sh")]

# One fake mechanism, `python fake.py MODE PIDFILE`: it writes its pid, then serves Laplace outputs drawn from the
# request's seed, or breaks the protocol the way MODE says.
FAKE = textwrap.dedent(
    """
    import json, os, random, sys, time
    mode, pidfile = sys.argv[1], sys.argv[2]
    with open(pidfile, "w") as f:
        f.write(str(os.getpid()))
    out = sys.stdout
    served = 0
    for line in sys.stdin:
        request = json.loads(line)
        size, rng = request["size"], random.Random(request["seed"])
        outputs = [sum(request["data"]) + rng.expovariate(1.0) - rng.expovariate(1.0) for _ in range(size)]
        if mode == "exit-first":
            sys.stderr.write("Traceback (most recent call last):\\nRuntimeError: no licence for the noise library\\n")
            sys.exit(3)
        if mode.startswith("exit-after-") and served == int(mode.rsplit("-", 1)[1]):
            sys.stderr.write("Segmentation fault in the noise library\\n")
            sys.exit(1)
        if mode == "hang":
            time.sleep(1000)
        reply = {"outputs": outputs}
        if mode == "garbage":
            reply = "hello, this is not JSON"
        elif mode == "object":
            reply = {"outputs": [{"value": 1.0}] * size}
        elif mode == "count":
            reply = {"outputs": outputs[:-1]}
        elif mode == "ragged":
            reply = {"outputs": [[1.0, 2.0]] + outputs[1:]}
        elif mode == "shape-change" and served:
            reply = {"outputs": [[y, y] for y in outputs]}
        elif mode == "no-outputs":
            reply = {"result": outputs}
        elif mode == "error":
            reply = {"error": "the privacy budget is spent."}
        elif mode == "categories":
            reply = {"outputs": ["yes" if y > 0.5 else "no" for y in outputs]}
        if mode == "garbage":
            out.write(reply + "\\n")
        elif mode == "bad-npy":
            out.write('{"npy":12}\\n' + "not an .npy")
            out.write("!")
        else:
            out.write(json.dumps(reply) + "\\n")
        if mode == "two-lines":
            out.write(json.dumps(reply) + "\\n")
        out.flush()
        served += 1
        if mode == "exit-between":
            sys.exit(0)
    if mode == "linger":  # ignores the end of its input: only a kill stops it
        time.sleep(1000)
    """
)


def fake(tmp_path, mode, **kwargs):
    """Return (the fake mechanism in `mode`, the file its process writes its pid to)."""
    script, pidfile = tmp_path / "fake.py", tmp_path / f"{mode}.pid"
    script.write_text(FAKE)
    kwargs.setdefault("timeout", 10.0)
    return external([sys.executable, str(script), mode, str(pidfile)], epsilon=1.0, **kwargs), pidfile


def pid_of(pidfile):
    return int(pidfile.read_text())


def assert_reaped(pid):
    """The process is gone and was reaped: signal 0 finds nothing (a zombie would still be found) and it is no child of ours."""
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def assert_one_sentence(exc, *parts):
    message = str(exc)
    assert message.startswith("Mechanism '") and message.endswith(".") and "\n" not in message, message
    for part in parts:
        assert part in message, message


def draw(mech, size=5, seed=0, data=(0.0, 1.0)):
    return mech.sample(np.asarray(data), size, np.random.default_rng(seed))


# ---- audits through the protocol


def test_correct_awk_laplace_is_consistent_and_reproducible():
    with external([*SERVE, str(EXAMPLES / "laplace.awk"), "-v", "epsilon=1"], epsilon=1.0, name="awk-laplace") as mech:
        res = audit_mechanism(mech, trials=20_000, seed=0)
        again = audit_mechanism(mech, trials=20_000, seed=0)
    assert res.verdict == "consistent"
    assert 0.5 < res.lower_bound.epsilon <= 1.0
    assert again.lower_bound.epsilon == res.lower_bound.epsilon


def test_buggy_awk_laplace_is_a_violation():
    # Half the noise on a sum that moves by 1: 2-DP, claimed 1-DP.
    with external([*SERVE, str(EXAMPLES / "laplace.awk"), "-v", "epsilon=1", "-v", "sensitivity=0.5"], epsilon=1.0) as mech:
        res = audit_mechanism(mech, trials=20_000, seed=0)
    assert res.verdict == "violation"
    assert 1.0 < res.lower_bound.epsilon <= 2.0


def test_awk_outputs_are_laplace_on_the_sum_and_follow_the_seed():
    with external([*SERVE, str(EXAMPLES / "laplace.awk"), "-v", "epsilon=2"], epsilon=2.0) as mech:
        out = draw(mech, 20_000, seed=1, data=[0.25, 0.5, 1.0])
        same, other = draw(mech, 50, seed=7), draw(mech, 50, seed=8)
        assert np.array_equal(same, draw(mech, 50, seed=7))
    assert out.shape == (20_000,) and not np.array_equal(same, other)
    # Laplace(1/2) around 1.75: mean within 5 standard errors (sd √2/2), mean |noise| = scale within 5%.
    assert abs(out.mean() - 1.75) < 5 * (np.sqrt(2) / 2) / np.sqrt(len(out))
    assert abs(np.abs(out - 1.75).mean() - 0.5) < 0.025


def test_the_default_pair_is_the_worst_case_of_a_unit_sum_under_each_relation():
    d0, d1 = unit_sum_pair()
    assert d0.shape == (10,) and d1.shape == (11,) and d0.sum() == 0.0 and d1.sum() == 1.0
    mech = external(["cat"], epsilon=1.0)
    assert all(np.array_equal(a, b) for a, b in zip(mech.default_pair, (d0, d1)))
    r0, r1 = unit_sum_pair(relation="replace-one")
    assert r0.shape == r1.shape == (10,) and r1.sum() == 1.0
    replace = external(["cat"], epsilon=1.0, relation="replace-one")
    assert all(np.array_equal(a, b) for a, b in zip(replace.default_pair, (r0, r1)))


def test_string_outputs_are_categories(tmp_path):
    mech, _ = fake(tmp_path, "categories")
    with mech:
        out = draw(mech, 100)
    assert out.shape == (100,) and len(np.unique(out)) == 2


def test_a_pickled_copy_starts_its_own_process_and_draws_the_same(tmp_path):
    mech, _ = fake(tmp_path, "ok")
    with mech, pickle.loads(pickle.dumps(mech)) as copy:
        assert np.array_equal(draw(mech), draw(copy))
        assert copy.sampler.pid != mech.sampler.pid


# ---- how a process can break the protocol: one sentence, a killed and reaped process


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("exit-first", ["exited with status 3 before replying to a request for 5 outputs", "no licence for the noise library"]),
        ("garbage", ["replied with a line that is not JSON", "hello, this is not JSON"]),
        ("object", ["is a JSON object; an output is a number, a string or a list of numbers"]),
        ("count", ["replied with 4 outputs where 5 were asked for"]),
        ("ragged", ["outputs of changing shape ((), (2,))"]),
        ("no-outputs", ['replied without an "outputs" list']),
        ("error", ["reported an error: the privacy budget is spent"]),
        ("two-lines", ["wrote more than one reply"]),
        ("bad-npy", ["replied with .npy bytes that numpy cannot read"]),
    ],
)
def test_a_broken_reply_is_one_sentence_and_the_process_is_reaped(tmp_path, mode, expected):
    mech, pidfile = fake(tmp_path, mode)
    with pytest.raises(MechanismError) as exc:
        draw(mech)
        time.sleep(0.05)  # a second reply may come after the first was taken: then the next request finds it
        draw(mech)
    assert_one_sentence(exc.value, "fake.py", *expected)
    assert mech.sampler.pid is None
    assert_reaped(pid_of(pidfile))


def test_outputs_changing_shape_between_batches_on_the_same_data_are_refused(tmp_path):
    mech, pidfile = fake(tmp_path, "shape-change")
    assert draw(mech).shape == (5,)
    assert draw(mech, data=[1.0]).shape == (5, 2)  # other data may have outputs of another shape
    with pytest.raises(MechanismError) as exc:
        draw(mech)
    assert_one_sentence(exc.value, "replied with outputs of shape (2,) where its first reply on the same data had ()")
    assert_reaped(pid_of(pidfile))


def test_a_process_that_hangs_is_killed_at_the_timeout_with_its_children(tmp_path):
    script, pidfile = tmp_path / "hang.sh", tmp_path / "hang.pid"
    script.write_text(f'echo $$ > {pidfile}\nread line\necho "computing the noise..." >&2\nsleep 1000\n')
    mech = external(["sh", str(script)], epsilon=1.0, timeout=0.5)
    start = time.monotonic()
    with pytest.raises(MechanismError) as exc:
        draw(mech)
    assert time.monotonic() - start < 5.0
    assert_one_sentence(exc.value, "hang.sh", "did not reply within the timeout of 0.5 seconds", "computing the noise...")
    pid = pid_of(pidfile)
    assert_reaped(pid)
    assert group_ends(pid)  # its `sleep` too, killed with the group (and reaped by init, whose child it now is)


def group_ends(pgid, seconds=5.0):
    """Return True once no process is left in the process group `pgid`, False if some still is after `seconds`."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.01)
    return False


def test_a_process_that_crashes_halfway_through_an_audit_stops_it(tmp_path):
    mech, pidfile = fake(tmp_path, "exit-after-3")
    with pytest.raises(MechanismError) as exc:
        audit_mechanism(mech, trials=2_000, seed=0)
    assert_one_sentence(exc.value, "exited with status 1 before replying", "Segmentation fault in the noise library")
    assert_reaped(pid_of(pidfile))


def test_a_process_that_exits_between_batches_is_a_crash(tmp_path):
    mech, pidfile = fake(tmp_path, "exit-between")
    assert draw(mech).shape == (5,)
    pid = pid_of(pidfile)
    time.sleep(0.3)
    with pytest.raises(MechanismError) as exc:
        draw(mech)
    assert_one_sentence(exc.value, "exited with status 0")
    assert_reaped(pid)


def test_ctrl_c_or_the_cli_time_limit_while_waiting_kills_the_process(tmp_path):
    mech, pidfile = fake(tmp_path, "hang", timeout=None)

    def alarm(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            draw(mech)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert_reaped(pid_of(pidfile))


def test_the_process_lives_across_batches_and_stops_on_close_and_on_garbage_collection(tmp_path):
    mech, pidfile = fake(tmp_path, "ok")
    draw(mech)
    pid = mech.sampler.pid
    draw(mech)
    assert mech.sampler.pid == pid == pid_of(pidfile)
    mech.close()
    assert mech.sampler.pid is None
    assert_reaped(pid)
    draw(mech)  # a new process on the next draw
    pid = mech.sampler.pid
    del mech
    gc.collect()
    assert_reaped(pid)


def test_a_process_that_ignores_the_end_of_its_input_is_killed_when_python_exits(tmp_path):
    script, pidfile = tmp_path / "fake.py", tmp_path / "linger.pid"
    script.write_text(FAKE)
    user = (
        "import numpy as np, sys\n"
        "from dpaudit.mechanisms.external.processes import external\n"
        f"mech = external([sys.executable, {str(script)!r}, 'linger', {str(pidfile)!r}], epsilon=1.0)\n"
        "mech.sample(np.zeros(3), 4, np.random.default_rng(0))\n"  # exits without closing it
    )
    subprocess.run([sys.executable, "-c", user], check=True, timeout=60)
    assert group_ends(pid_of(pidfile))


# ---- bad input


def test_a_command_that_cannot_be_run_is_bad_input(tmp_path):
    with pytest.raises(InvalidParameterError, match="'no-such-mechanism-program' cannot be run: not found in PATH"):
        external("no-such-mechanism-program --epsilon 1", epsilon=1.0)
    script = tmp_path / "mech.sh"
    script.write_text("echo hello\n")
    with pytest.raises(InvalidParameterError, match="not executable"):
        external(str(script), epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="no such file"):
        external(str(tmp_path / "missing.sh"), epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="empty"):
        external("  ", epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="timeout"):
        external("cat", epsilon=1.0, timeout=0)


def test_data_that_json_cannot_carry_are_bad_input(tmp_path):
    mech, _ = fake(tmp_path, "ok")
    with pytest.raises(InvalidParameterError, match="cannot be sent as JSON"):
        draw(mech, data=[0.0, float("nan")])


# ---- Python in another environment


def other_python():
    """Return a Python interpreter other than this one (the system's), or None."""
    for candidate in ("/usr/bin/python3", shutil.which("python3")):
        if candidate and os.path.exists(candidate) and os.path.realpath(candidate) != os.path.realpath(sys.executable):
            return candidate
    return None


def has_numpy(python):
    return subprocess.run([python, "-c", "import numpy"], capture_output=True).returncode == 0


STDLIB_MECHANISM = textwrap.dedent(
    """
    import random

    def laplace_sum(data, size, seed):
        print("this goes to standard error, not into the replies")
        rng = random.Random(seed)
        return [sum(data) + rng.expovariate(1.0) - rng.expovariate(1.0) for _ in range(size)]

    def broken(data, rng, size):
        return 1 / 0
    """
)


def test_this_environment_run_as_another_interpreter_serves_the_docs_example():
    python = sys.executable
    with external_python(python, "other_env_mechanism:laplace_sum", epsilon=1.0, path=[EXAMPLES]) as mech, \
            external_python(python, "other_env_mechanism:laplace_sum", epsilon=1.0, path=[EXAMPLES], binary=False) as text:
        assert mech.name == "other_env_mechanism:laplace_sum"
        binary = draw(mech, 1000, seed=3)
        assert np.array_equal(binary, draw(text, 1000, seed=3))  # .npy and JSON replies carry the same numbers
        res = audit_mechanism(mech, trials=20_000, seed=0)
    assert res.verdict == "consistent" and res.lower_bound.epsilon > 0.5


def test_a_python_without_numpy_or_dpaudit_serves_a_stdlib_function(tmp_path):
    python = other_python()
    if python is None:
        pytest.skip("No Python interpreter other than this one is installed.")
    (tmp_path / "plain_mechanism.py").write_text(STDLIB_MECHANISM)
    with external_python(python, "plain_mechanism:laplace_sum", epsilon=1.0, path=[tmp_path]) as mech:
        out = draw(mech, 2000, seed=5, data=[0.0, 1.0])
        assert np.array_equal(out, draw(mech, 2000, seed=5, data=[0.0, 1.0]))
    assert out.shape == (2000,) and abs(np.median(out) - 1.0) < 0.2


def test_the_docs_example_under_the_system_python():
    python = other_python()
    if python is None or not has_numpy(python):
        pytest.skip("The system's Python has no numpy, which the docs example needs.")
    with external_python(python, "other_env_mechanism:laplace_sum", epsilon=1.0, path=[EXAMPLES]) as mech:
        assert draw(mech, 100).shape == (100,)


def test_a_function_that_cannot_be_imported_is_bad_input_and_one_that_raises_a_crash(tmp_path):
    (tmp_path / "plain_mechanism.py").write_text(STDLIB_MECHANISM)
    with pytest.raises(UnknownMechanismError, match="cannot import module 'no_such_module'"):
        external_python(sys.executable, "no_such_module:fn", epsilon=1.0)
    with pytest.raises(UnknownMechanismError, match="has no attribute 'missing'"):
        external_python(sys.executable, "plain_mechanism:missing", epsilon=1.0, path=[tmp_path])
    with pytest.raises(InvalidParameterError, match="module:attr"):
        external_python(sys.executable, "plain_mechanism", epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="cannot be run"):
        external_python(str(tmp_path / "venv" / "bin" / "python"), "plain_mechanism:laplace_sum", epsilon=1.0)
    mech = external_python(sys.executable, "plain_mechanism:broken", epsilon=1.0, path=[tmp_path])
    with pytest.raises(MechanismError) as exc:
        draw(mech)
    assert_one_sentence(exc.value, "reported an error: ZeroDivisionError: division by zero")


def test_an_external_mechanism_is_a_mechanism_with_its_claim():
    mech = external("cat", epsilon=0.5, delta=1e-6, relation="replace-one")
    assert isinstance(mech, ExternalMechanism)
    assert (mech.claim.epsilon, mech.claim.delta, mech.claim.relation.value) == (0.5, 1e-6, "replace-one")
    assert mech.with_claim(epsilon=2.0).sampler is mech.sampler
    assert mech.params == {"command": "cat"}
