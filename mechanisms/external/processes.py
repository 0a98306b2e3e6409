"""A black-box mechanism whose outputs come from another process: a command in any language, or Python in another environment.

The protocol (all a program in another language needs to implement)
-------------------------------------------------------------------

One long-lived process serves one mechanism. dpaudit starts it on the
first draw, with the command's arguments, in the current directory, and
keeps it for every later batch. It writes one request per line to the
process's standard input and reads one reply per request from its
standard output, both compact UTF-8 JSON on one line:

    request:  {"size":N,"seed":S,"data":D}\\n
    reply:    {"outputs":[y1,y2,...,yN]}\\n

- The keys of a request always come in that order, without spaces; D is
  the dataset as JSON: a list of numbers (or of strings, or of
  equal-length lists for vector records), or an object of columns.
  N ≥ 1 outputs are asked for at once, up to a few hundred thousand: a
  batch is the audit's chunk, never one output per round trip.
- S is an integer in [0, 2³¹) drawn from the audit's random generator:
  a program that seeds its generator with S (and uses no other source of
  randomness) gives the same audit for the same audit seed. Each batch
  gets a new seed; the outputs of a batch must be independent draws.
- The reply holds exactly N outputs, each a number, a string (a category),
  or a list of numbers (a vector), of one shape for one dataset. Integers
  stay integers, exactly, up to 64 bits (`json_integers`): a batch of
  non-negative ones is read as uint64, so a double released as its
  IEEE-754 bit pattern keeps every bit and gets the low-bits test. JSON
  has no NaN or infinity: write null (Python's NaN, Infinity and
  -Infinity are read too); the audit maps them to a fixed number
  (`dpaudit.mechanisms.outputs`). A reply {"error":"message"} reports
  a failure of the mechanism, which stops the audit with that message.
- Optional binary reply, for programs that can write numpy's .npy
  format: the line {"npy":LENGTH} followed by LENGTH bytes of one .npy
  file holding the N outputs along its first axis (numbers; no pickles).
  The Python worker uses it for arrays of numbers: text costs about
  1.5 µs an output to write and read, .npy about 0.05 µs
  (benchmarks/external.py: an audit of one Laplace mechanism took 7 to
  9 times as long as in process with JSON replies, 1.0 to 1.2 times with .npy).
- Read one line at a time and flush standard output after each reply
  (awk: `fflush()`; C: `fflush(stdout)`; Python: `flush=True`): a pipe is
  block-buffered both ways, and a program that waits for a full block of
  input before its first line (mawk does) waits for ever, since dpaudit
  sends the next request only after the reply (docs/examples/serve.sh
  runs one awk per request for that reason). Write nothing else on
  standard output; standard error is free (its last lines are shown
  when something goes wrong).
- End of input means exit (status 0). The process is stopped (its standard
  input closed, then, after a second, its whole process group killed) when
  the mechanism is closed (`ExternalMechanism.close()` or `with`), garbage
  collected, or when Python exits.

What dpaudit does when that contract is broken: a process that exits
before replying (at the start or halfway through an audit), does not
reply within `timeout` seconds, replies with something other than one
JSON object with an `outputs` list (or readable .npy bytes), with the
wrong number of outputs, with an output that is neither a number, a
string nor a list of numbers, or with outputs whose shape changes on the
same data, is killed with its process group and reaped (no zombie), and
the draw raises `MechanismError` in one sentence naming the mechanism and
the command, with the tail of its standard error; a bad reply never
becomes an output (a second reply to one request is found with the
first, or before the next request is sent, once it has arrived). The
next draw starts a new process. A command that cannot be found or run is
bad input (`InvalidParameterError`), found when the mechanism is built.

Python in another environment (`external_python`) uses the same protocol:
that interpreter runs `external_worker.py`, a standalone script of this
package (standard library, numpy when the environment has it), by path,
since dpaudit is not installed there.

Unix only (pipes are polled with `selectors`; the process gets a session
of its own, so that a hung child of a shell script is killed with it).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from dpaudit.errors import InvalidParameterError, MechanismError, UnknownMechanismError
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.neighbours import NeighbourCheck
from dpaudit.mechanisms.outputs import check_outputs
from dpaudit.validation import check_int

__all__ = [
    "DEFAULT_TIMEOUT",
    "SEED_BOUND",
    "ExternalMechanism",
    "ExternalProcess",
    "SideRequests",
    "external",
    "external_python",
    "side_process",
    "json_integers",
    "unit_sum_pair",
]

SEED_BOUND = 2**31
"""Seeds sent to the process are integers in [0, SEED_BOUND): a signed 32-bit integer in any language."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a process may take to answer one batch (its start-up included) before it is killed."""

WORKER = Path(__file__).resolve().parents[1] / "scripts" / "external_worker.py"
GRACE = 1.0  # seconds a process gets to exit after its standard input is closed
STDERR_KEPT = 4096  # bytes of standard error kept for error messages
STDERR_SHOWN = 300  # characters of it shown in one
READ = 1 << 20
SHAPES_KEPT = 10_000  # datasets whose first output shape is remembered (a pair search tries many)


def unit_sum_pair(n: int = 10, relation: Relation | str = Relation.ADD_REMOVE) -> tuple[np.ndarray, np.ndarray]:
    """Return the default neighbouring pair of a sum of records in [0, 1] under `relation`.

    Add-remove: `n` zeros against the same with a record 1 added (n + 1
    records): nothing is assumed of the program, so no record stands for
    "no record". Replace-one: `n` zeros against the same with the first
    record replaced by 1. Either moves a sum (or a count) of records in
    [0, 1] by 1, its worst case. For any other mechanism the pair must be
    given (`audit_mechanism(mech, d0, d1)`, the CLI's --d0/--d1).
    """
    d0 = np.zeros(n)
    if Relation(relation) is Relation.REPLACE_ONE:
        return d0, np.concatenate([[1.0], d0[1:]])
    return d0, np.append(d0, 1.0)


@dataclasses.dataclass(frozen=True)
class ExternalMechanism(Mechanism):
    """A `Mechanism` whose sampler is an `ExternalProcess`: close it with `close()` or a `with` block.

    Its `sample` lets the process's `MechanismError` through as it is (one
    sentence naming the command), rather than wrapped in a second one.
    Copies (`with_claim`) share the process.
    """

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Return `size` outputs of the process on `data` (see `ExternalProcess.__call__`)."""
        size = check_int(size, "size", f"{self.name}.sample")
        return check_outputs(self.name, self.sampler(data, size, rng), size)

    def close(self) -> None:
        """Stop the process (the next draw starts a new one)."""
        self.sampler.close()

    def __enter__(self) -> "ExternalMechanism":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Child:
    """The running process of an `ExternalProcess`, apart from it so that a finalizer can stop it."""

    def __init__(self) -> None:
        self.popen: subprocess.Popen | None = None
        self.owner = 0  # the pid of the Python process that started it (a forked copy starts its own)
        self.stderr = bytearray()


class ExternalProcess:
    """`sampler(data, size, rng)` of an external mechanism: one long-lived process answering JSON requests.

    Picklable (for Dask workers): a copy carries the command, not the
    process, and starts its own on first use.
    """

    def __init__(self, argv: Sequence[str], label: str, timeout: float | None) -> None:
        self.argv, self.label, self.timeout = list(argv), label, timeout
        self._child, self._lock = _Child(), threading.Lock()
        self._shapes: dict[int, tuple[int, ...]] = {}  # the shape of the first reply on each dataset (by its JSON's hash)
        weakref.finalize(self, _stop, self._child)

    def __reduce__(self) -> tuple[Any, ...]:
        return ExternalProcess, (self.argv, self.label, self.timeout)

    @property
    def pid(self) -> int | None:
        """Return the process id of the running process, or None when none runs."""
        popen = self._child.popen
        return popen.pid if popen is not None and popen.returncode is None else None

    def close(self) -> None:
        """Close the process's standard input, give it a second to exit, then kill its process group and reap it."""
        with self._lock:
            _stop(self._child)

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Return `size` outputs of the process on `data`, drawn with a seed taken from `rng`.

        The seed is drawn from `rng` whatever happens next, so the audit's
        streams do not depend on the process. Raises `InvalidParameterError`
        when `data` cannot be written as JSON (NaN, infinity, objects), and
        `MechanismError` (one sentence; the process killed and reaped) when
        the process breaks the protocol (see the module docstring).
        """
        seed = int(rng.integers(SEED_BOUND))
        payload = _data_json(data, self.label)
        request = b'{"size":%d,"seed":%d,"data":%s}\n' % (size, seed, payload)
        with self._lock:
            try:
                line, npy = self._exchange(request, f"a request for {size} outputs")
                return self._outputs(line, npy, size, hash(payload))
            except BaseException:  # a broken reply, a timeout, Ctrl-C: the process's state is unknown
                _stop(self._child, grace=0.0)
                raise

    # ---- one request, one reply

    def _exchange(self, request: bytes, asked: str) -> tuple[bytes, bytes | None]:
        """Send `request`; return the reply line and the .npy bytes after it (None for a JSON reply).

        Raises `MechanismError` when the process exits, hangs past the
        timeout, or writes more than one reply.
        """
        popen = self._running()
        stdin, stdout, stderr = popen.stdin.fileno(), popen.stdout.fileno(), popen.stderr.fileno()
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        pending, reply = memoryview(request), _Reply()
        with selectors.DefaultSelector() as selector:
            selector.register(stdin, selectors.EVENT_WRITE)
            selector.register(stdout, selectors.EVENT_READ)
            selector.register(stderr, selectors.EVENT_READ)
            while True:
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    self._fail(f"did not reply within the timeout of {self.timeout:g} seconds to {asked}, so it was killed")
                for key, _ in selector.select(wait):
                    if key.fd == stderr:
                        if self._read_stderr() == b"":
                            selector.unregister(stderr)
                    elif key.fd == stdin:
                        try:
                            pending = pending[os.write(stdin, pending[:READ]):]
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:
                            self._died(f"before reading {asked}")
                        if not pending:
                            selector.unregister(stdin)
                    else:
                        try:
                            chunk = os.read(stdout, READ)
                        except BlockingIOError:
                            continue
                        if not chunk:
                            self._died(f"before replying to {asked}" if not reply.data else f"halfway through its reply to {asked}")
                        if reply.add(chunk):
                            if reply.problem:
                                self._fail(f"{reply.problem} in reply to {asked}")
                            return reply.parts()

    def _running(self) -> subprocess.Popen:
        """Return the process, started now if none runs; raise `MechanismError` if it exited or wrote since its last reply."""
        child = self._child
        if child.popen is not None and child.owner != os.getpid():
            child.popen = None  # started by the process this one was forked from: not ours to talk to
        if child.popen is None:
            child.stderr = bytearray()
            try:
                child.popen = subprocess.Popen(
                    self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    bufsize=0, start_new_session=True, close_fds=True,
                )
            except OSError as exc:
                raise MechanismError(f"{self.label} could not be started ({exc.strerror or exc}).") from exc
            child.owner = os.getpid()
            for pipe in (child.popen.stdin, child.popen.stdout, child.popen.stderr):
                os.set_blocking(pipe.fileno(), False)
            return child.popen
        popen = child.popen
        with selectors.DefaultSelector() as selector:
            selector.register(popen.stdout.fileno(), selectors.EVENT_READ)
            if selector.select(0):
                extra = os.read(popen.stdout.fileno(), READ)
                if not extra:
                    self._died("after its previous reply (one process must serve every request)")
                self._fail(f"wrote more than one reply, found before the next request ({_quote(extra)})")
        return popen

    def _read_stderr(self) -> bytes | None:
        """Keep what the process wrote to standard error (its tail); return what was read (b"" at its end, None for nothing now)."""
        try:
            chunk = os.read(self._child.popen.stderr.fileno(), READ)
        except BlockingIOError:
            return None
        self._child.stderr = (self._child.stderr + chunk)[-STDERR_KEPT:]
        return chunk

    def _died(self, when: str) -> None:
        """Raise `MechanismError`: the process exited (or closed its pipes) `when`; reap it first for its status."""
        popen = self._child.popen
        try:
            status = popen.wait(GRACE)
        except subprocess.TimeoutExpired:
            status = None
        for _ in range(64):  # what is left of it: up to its end, or what a process still running has written so far
            if not self._read_stderr():
                break
        if status is None:
            what = "closed its standard output"
        elif status < 0:
            what = f"was killed by {_signal_name(-status)}"
        else:
            what = f"exited with status {status}"
        self._fail(f"{what} {when}")

    def _fail(self, what: str) -> None:
        """Raise `MechanismError`: "LABEL WHAT (stderr ends: ...)." (the caller kills the process)."""
        raise MechanismError(f"{self.label} {what}{_stderr_tail(self._child.stderr)}.")

    def _outputs(self, line: bytes, npy: bytes | None, size: int, dataset: int) -> np.ndarray:
        """Return the reply's outputs as an array, or raise `MechanismError` saying what is wrong with it.

        `dataset` (a hash of the request's data) keys the shape of the first reply on those data.
        """
        arr = self._from_json(line, size) if npy is None else self._from_npy(npy, size)
        shape = self._shapes.get(dataset, arr.shape[1:])
        if len(self._shapes) < SHAPES_KEPT:
            self._shapes.setdefault(dataset, shape)
        if arr.shape[1:] != shape:
            self._fail(f"replied with outputs of shape {arr.shape[1:]} where its first reply on the same data had {shape}")
        return arr

    def _from_json(self, line: bytes, size: int) -> np.ndarray:
        try:
            message = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            self._fail(f"replied with a line that is not JSON ({_quote(line)})")
        if isinstance(message, dict) and "error" in message:
            self._fail(f"reported an error: {str(message['error']).strip().rstrip('.')}")
        if not isinstance(message, dict) or not isinstance(message.get("outputs"), list):
            self._fail(f'replied without an "outputs" list ({_quote(line)})')
        outputs = message["outputs"]
        if len(outputs) != size:
            self._fail(f"replied with {len(outputs)} outputs where {size} were asked for")
        whole = json_integers(outputs)
        if whole is not None:
            return whole
        try:
            return np.array(outputs, dtype=np.float64)  # numbers, null (NaN), equal-length lists of them
        except (ValueError, TypeError):
            return self._mixed(outputs)

    def _from_npy(self, raw: bytes, size: int) -> np.ndarray:
        import io

        try:
            arr = np.load(io.BytesIO(raw), allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            self._fail(f"replied with .npy bytes that numpy cannot read ({str(exc).rstrip('.')})")
        if arr.ndim == 0 or arr.dtype.kind not in "biufcUS":
            self._fail(f"replied with an .npy array of shape {arr.shape} and dtype {arr.dtype}, not a batch of outputs")
        if len(arr) != size:
            self._fail(f"replied with {len(arr)} outputs where {size} were asked for")
        return arr

    def _mixed(self, outputs: list[Any]) -> np.ndarray:
        """Return outputs that are not all numbers (strings among them) as an array, or raise on a bad type or shape."""
        shapes = set()
        for output in outputs:
            shape = _shape(output)
            if shape is None:
                self._fail(f"replied with an output that is {_kind(output)}; an output is a number, a string or a list of numbers")
            shapes.add(shape)
        if len(shapes) > 1:
            self._fail(f"replied with outputs of changing shape ({', '.join(map(str, sorted(shapes)))})")
        return np.array(outputs, dtype=object)  # `check_outputs` maps each element to a number


class _Reply:
    """The bytes of one reply as they arrive: a line, and after a line {"npy":LENGTH} that many bytes of .npy."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.line_end: int | None = None  # the length of the reply's line, newline included, once it is in
        self.npy: int | None = None  # the length of the .npy bytes its line announced, if any
        self.problem: str | None = None  # what is wrong with it, once something is

    def add(self, chunk: bytes) -> bool:
        """Add `chunk`; return True once the reply is whole (`parts()`) or malformed (`problem`)."""
        self.data += chunk
        if self.line_end is None:
            end = self.data.find(b"\n", len(self.data) - len(chunk))
            if end < 0:
                return False
            self.line_end = end + 1
            self.npy, self.problem = _npy_length(bytes(self.data[:end]))
            if self.problem:
                return True
        length = self.line_end + (self.npy or 0)
        if len(self.data) > length:
            self.problem = f"wrote more than one reply ({_quote(self.data[length:])})"
        return len(self.data) >= length

    def parts(self) -> tuple[bytes, bytes | None]:
        """Return the reply's line, and the .npy bytes after it (None for a JSON reply)."""
        line = bytes(self.data[: self.line_end])
        return line, None if self.npy is None else bytes(self.data[self.line_end:])


def json_integers(outputs: list[Any]) -> np.ndarray | None:
    """Return outputs that are all JSON integers (or equal-length lists of them) as integers, exactly; else None.

    Non-negative ones that fit 64 bits are uint64 (a released double's
    IEEE-754 bit pattern, beyond 2⁵³ too, as the .npy reply and in-process
    mechanisms give it, so the low-bits test is tried); others int64 when
    they fit. A float, a bool, null, text or an integer beyond 64 bits among
    them: None (the outputs are then read as numbers, `dpaudit.mechanisms.outputs`).
    """
    try:
        arr = np.array(outputs, dtype=object)
    except ValueError:  # ragged lists: not a batch of integers
        return None
    flat = arr.ravel().tolist()
    if not flat or not all(type(x) is int for x in flat):
        return None
    low, high = min(flat), max(flat)
    if low >= 0 and high < 2**64:
        return np.array(flat, dtype=np.uint64).reshape(arr.shape)
    if -(2**63) <= low and high < 2**63:
        return np.array(flat, dtype=np.int64).reshape(arr.shape)
    return None


def _npy_length(line: bytes) -> tuple[int | None, str | None]:
    """Return (the length of the .npy bytes a line {"npy":LENGTH} announces, None) ((None, None) for any
    other line), or (None, a sentence) when LENGTH is bad."""
    if not line.startswith(b'{"npy":'):
        return None, None
    try:
        length = json.loads(line)["npy"]
    except (ValueError, KeyError, TypeError):
        return None, f"announced .npy bytes with a malformed line ({_quote(line)})"
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        return None, f"announced .npy bytes of length {length!r}"
    return length, None


def _stop(child: _Child, grace: float = GRACE) -> None:
    """Close the process's standard input, wait up to `grace` seconds, kill its process group and reap it.

    The group is killed before the leader is reaped, while its id cannot be
    taken by another process, so children the command left behind die too.
    """
    popen, child.popen = child.popen, None
    if popen is None or child.owner != os.getpid():
        return
    for pipe in (popen.stdin, popen.stdout, popen.stderr):
        try:
            pipe.close()
        except OSError:
            pass
    end = time.monotonic() + grace
    while grace > 0 and not _exited(popen.pid) and time.monotonic() < end:
        time.sleep(0.005)
    try:
        os.killpg(popen.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if not _exited(popen.pid):  # it left its group (setsid): kill it alone
        popen.kill()
    popen.wait()


def _exited(pid: int) -> bool:
    """Return True when process `pid` (our child) has exited, without reaping it."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _shape(output: Any) -> tuple[int, ...] | None:
    """Return the shape of one JSON output (a string or a number: ()), or None for a type that is no output."""
    if output is None or isinstance(output, (str, int, float)):
        return ()
    if isinstance(output, list):
        inner = {_shape(x) for x in output}
        if None in inner or len(inner) > 1:
            return None
        return (len(output), *(inner.pop() if inner else ()))
    return None


def _kind(output: Any) -> str:
    if isinstance(output, dict):
        return "a JSON object"
    if isinstance(output, list):
        return "a list of mixed or ragged values"
    return f"a {type(output).__name__}"


def _data_json(data: Any, label: str) -> bytes:
    """Return `data` as compact JSON bytes, or raise `InvalidParameterError` when JSON cannot carry it."""
    if isinstance(data, np.ndarray):
        value = data.tolist()
    elif isinstance(data, Mapping):
        value = {str(k): np.asarray(v).tolist() for k, v in data.items()}
    elif hasattr(data, "to_numpy") and hasattr(data, "columns"):
        value = {str(k): data[k].to_numpy().tolist() for k in data.columns}
    else:
        value = data
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=False, default=_plain).encode()
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(
            f"The dataset for {label} cannot be sent as JSON ({str(exc).rstrip('.')}); "
            "records must be numbers (finite), strings or lists of them."
        ) from None


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"a {type(value).__name__} is not JSON")


def _quote(raw: bytes | bytearray) -> str:
    text = bytes(raw).decode("utf-8", "replace").strip()
    return repr(text[:60] + "…") if len(text) > 60 else repr(text)


def _stderr_tail(raw: bytes | bytearray) -> str:
    text = " | ".join(line.strip() for line in bytes(raw).decode("utf-8", "replace").splitlines() if line.strip())
    if not text:
        return ""
    if len(text) > STDERR_SHOWN:
        text = "…" + text[-STDERR_SHOWN:]
    return f" (its standard error ends: {text!r})"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _argv(command: str | Sequence[str]) -> list[str]:
    """Return the command as an argument list (a string is split as a shell would, without running a shell)."""
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise InvalidParameterError(f"The command {command!r} cannot be split into arguments ({exc}).") from None
    elif isinstance(command, Sequence) and all(isinstance(a, (str, os.PathLike)) for a in command):
        argv = [os.fspath(a) for a in command]
    else:
        raise InvalidParameterError(f"The 'command' parameter must be a string or a list of strings; got {command!r:.60} instead.")
    if not argv or not argv[0]:
        raise InvalidParameterError("The 'command' parameter is empty; give the program to run and its arguments.")
    return argv


def _executable(program: str, what: str) -> str:
    """Return the path of `program` (a path, or a name looked up in PATH), or raise `InvalidParameterError`."""
    found = shutil.which(program)
    if found:
        return found
    if os.sep in program and os.path.exists(program):
        raise InvalidParameterError(f"The {what} '{program}' cannot be run: it is a directory or not executable (chmod +x?).")
    where = "no such file" if os.sep in program else "not found in PATH"
    raise InvalidParameterError(f"The {what} '{program}' cannot be run: {where}.")


def _label(name: str, shown: str, what: str) -> str:
    """Return how errors name the mechanism: "Mechanism 'NAME' (command `CMD`)", or without the command when it is the name."""
    shown = shown if len(shown) <= 120 else shown[:119] + "…"
    return f"Mechanism '{name}'" if name == shown else f"Mechanism '{name}' ({what} `{shown}`)"


def _check_timeout(timeout: float | None) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0 or timeout == float("inf"):
        raise InvalidParameterError(f"The 'timeout' parameter must be a positive number of seconds or None; got {timeout!r} instead.")
    return float(timeout)


def _mechanism(argv: list[str], label: str, name: str, *, epsilon: float, delta: float, relation: Relation | str,
               default_pair: tuple[Any, Any] | None, neighbours: NeighbourCheck | None, null_record: Any,
               timeout: float | None, params: dict[str, Any]) -> ExternalMechanism:
    from dp_accounting import dp_event

    if sys.platform == "win32":
        raise InvalidParameterError("External mechanisms need a Unix system (pipes polled with selectors, process groups).")
    claim = Claim(epsilon, delta, relation)
    process = ExternalProcess(argv, label, _check_timeout(timeout))
    return ExternalMechanism(
        name=name, sampler=process, claim=claim, event=dp_event.UnsupportedDpEvent(),
        default_pair=unit_sum_pair(relation=claim.relation) if default_pair is None else default_pair,
        neighbours=neighbours, null_record=null_record, params=params,
    )


def external(
    command: str | Sequence[str],
    *,
    epsilon: float,
    delta: float = 0.0,
    relation: Relation | str = Relation.ADD_REMOVE,
    name: str | None = None,
    default_pair: tuple[Any, Any] | None = None,
    neighbours: NeighbourCheck | None = None,
    null_record: Any = None,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> ExternalMechanism:
    """Return the program `command` (any language, speaking the protocol of this module) as a mechanism claiming (ε, δ)-DP.

    `command` is an argument list, or a string split as a shell would
    (`shlex.split`; no shell runs, so no pipes or `$VARS`: write
    `sh -c '...'` for those). Nothing is assumed about the program's privacy:
    the upper bound is the claim, and the audit is sound for what the
    program does, provided its outputs in one batch are independent draws
    given the seed, as for any black box.

    Args:
        command: the program and its arguments, e.g. "sh docs/examples/serve.sh docs/examples/laplace.awk -v epsilon=1".
        epsilon, delta, relation: the claim to audit.
        name: the label in reports (default: the command line).
        default_pair: the pair audited when none is given; default `unit_sum_pair(relation=relation)`: ten
            zeros against the same with a record 1 added (add-remove) or the first replaced by 1 (replace-one).
        neighbours, null_record: a check of (d0, d1) replacing the relation's, the record that stands for
            "no record" (as for `blackbox`).
        timeout: seconds one batch may take (start-up included) before the process is killed; None waits for ever.

    Returns:
        An `ExternalMechanism`; its process starts on the first draw and stops on `close()`,
        at garbage collection or at exit.

    Raises:
        InvalidParameterError: when the program cannot be found or run, or on a bad claim or timeout (one sentence).
    """
    given = _argv(command)
    argv = [os.path.abspath(_executable(given[0], "command")), *given[1:]]
    line = shlex.join(given)
    name = name or line
    return _mechanism(argv, _label(name, line, "command"), name, epsilon=epsilon, delta=delta, relation=relation,
                      default_pair=default_pair, neighbours=neighbours, null_record=null_record, timeout=timeout,
                      params={"command": line})


def external_python(
    python: str,
    module_attr: str,
    *,
    epsilon: float,
    delta: float = 0.0,
    relation: Relation | str = Relation.ADD_REMOVE,
    name: str | None = None,
    default_pair: tuple[Any, Any] | None = None,
    neighbours: NeighbourCheck | None = None,
    null_record: Any = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    path: Sequence[str | os.PathLike] = (),
    check: bool = True,
    binary: bool = True,
) -> ExternalMechanism:
    """Return the function `module:attr` of another Python environment, run by the interpreter `python`, as a mechanism.

    The interpreter runs `external_worker.py` (standard library only, numpy
    if that environment has it; dpaudit need not be installed there). It
    imports `module` from the current directory, the folders of `path`,
    then that environment's own packages, and calls, per batch:

    - `fn(data, size=N, seed=S)` if `fn` has a parameter `seed` (S an int);
    - `fn(data, rng, size=N)` if it has a parameter `rng` (a
      `numpy.random.default_rng(S)`: the same function `blackbox` takes);
    - else `fn(data, N, S)`.

    `data` is a numpy array when numpy is there (a dict of arrays for
    columns), else lists. `fn` returns N outputs (an array or a list). What
    it prints goes to standard error. Sound under the same assumption as
    `external`: outputs of one batch are independent draws given S.

    Args:
        python: the interpreter, a path (".venv/bin/python") or a name in PATH.
        module_attr: "module:attr" naming the function in that environment.
        epsilon, delta, relation, name, default_pair, neighbours, null_record, timeout: as for `external`
            (name defaults to `module_attr`).
        path: folders to import `module` from, before that environment's own.
        check: import `module_attr` once now, in a short-lived process, so that a name that
            cannot be imported is bad input here rather than a crash in the audit.
        binary: let the worker reply with .npy bytes when `fn` returns a numpy array of numbers
            (the same outputs, about 25 times less time in transit); False: JSON only.

    Returns:
        An `ExternalMechanism` (see `external`).

    Raises:
        InvalidParameterError: when the interpreter cannot be run, or on a bad claim (one sentence).
        UnknownMechanismError: when `check` finds that `module_attr` cannot be imported or is not callable.
    """
    if not isinstance(module_attr, str) or not module_attr.partition(":")[0] or not module_attr.partition(":")[2]:
        raise InvalidParameterError(f"The function must be named as 'module:attr'; got {module_attr!r} instead.")
    interpreter = os.path.abspath(_executable(os.fspath(python), "Python interpreter"))
    folders = [os.path.abspath(os.fspath(p)) for p in path]
    argv = [interpreter, str(WORKER), *([] if binary else ["--json"]), module_attr, *folders]
    timeout = _check_timeout(timeout)
    if check:
        _check_import(interpreter, module_attr, folders, python, timeout)
    name = name or module_attr
    label = _label(name, os.fspath(python), "run by")
    return _mechanism(argv, label, name, epsilon=epsilon, delta=delta, relation=relation,
                      default_pair=default_pair, neighbours=neighbours, null_record=null_record, timeout=timeout,
                      params={"python": os.fspath(python), "function": module_attr})


def _check_import(interpreter: str, module_attr: str, folders: list[str], python: str, timeout: float | None) -> None:
    """Run the worker with --check: raise `UnknownMechanismError` when `module_attr` cannot be imported in that environment."""
    try:
        done = subprocess.run([interpreter, str(WORKER), "--check", module_attr, *folders], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired:
        raise MechanismError(f"Importing '{module_attr}' with {python} took longer than the timeout of {timeout:g} seconds.") from None
    except OSError as exc:
        raise InvalidParameterError(f"The Python interpreter '{python}' cannot be run ({exc.strerror or exc}).") from None
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = (lines[-1] if lines else f"exit status {done.returncode}").strip().rstrip(".")
        raise UnknownMechanismError(f"Cannot use '{module_attr}' with the interpreter {python}: {reason}.")


@functools.lru_cache(maxsize=None)
def side_process(python: str, module_attr: str, *, name: str, folder: str, timeout: float) -> ExternalProcess:
    """Return the one long-lived process of the interpreter `python` serving `module_attr` (a side script in `folder`).

    Library adapters share it: every mechanism of one library and one
    environment sends its batches to this process, so the library is
    imported once. Closing any of them stops it; the next batch starts it again.
    """
    return external_python(python, module_attr, epsilon=1.0, name=name, timeout=timeout, path=[folder],
                           check=False).sampler


class SideRequests:
    """The sampler of a library adapter: it sends each batch to its side process (`side_process`), held as `process`."""

    process: ExternalProcess

    @property
    def pid(self) -> int | None:
        """Return the process id of the running side process, or None."""
        return self.process.pid

    def close(self) -> None:
        """Stop the side process."""
        self.process.close()
