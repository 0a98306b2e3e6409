"""Record and replay every draw of a `numpy.random.RandomState`, inside a library's own environment.

A library that draws through the `random_state=` it is handed (diffprivlib
0.5 and later; scikit-learn) has one interception point: that object.
`Recording(seed)` is a RandomState that draws as `RandomState(seed)` would
and keeps each call (method, arguments by name, output); `Replaying(tape,
seed)` answers the same calls with the recorded outputs and keeps every
call that differs (another method or order, law, size, more or fewer
calls) as a divergence, answering it with a fresh draw so the run
finishes. Draws on data (`permutation`, `shuffle` and `choice` of an
array) are kept as indices and applied to the data of each run.
A library that draws from a source of its own has it routed to that state
for the run: `routed(rs)` sends numpy's global functions (`np.random.laplace`
and the others looked up on the module) and Python's `random` module (its
`random()` and `getrandbits()`, through which its other functions draw) to
`rs`, and `AsGenerator(rs)` is the `numpy.random.Generator` face of `rs` for
a library that draws through a Generator (Tumult Core's `prng()`). A
library's own noise primitive that draws elsewhere (in Rust: SmartNoise
Synth's OpenDP noise) is recorded as one call by `state.primitive(name,
arguments, draw)`: its output on D kept, handed back on D′ for the same
call.
`replay(run, seed)` runs `run(rs)` once on D with a recording state and
once on D′ with the replaying one, watches the sources it does not record
(numpy's global state, Python's `random`; any other, by replaying D on
itself: its release must come back),
and returns the record as one JSON string: what dpaudit's
`attacks.replay` reads back through the external protocol. Standard
library and numpy only (dpaudit is not installed where this runs).
"""

import contextlib
import inspect
import json
import random

import numpy as np

__all__ = ["AsGenerator", "Recording", "Replaying", "replay", "routed"]

_REAL = np.random.RandomState
METHODS = tuple(name for name in (
    "beta", "binomial", "bytes", "chisquare", "choice", "dirichlet", "exponential", "f", "gamma", "geometric",
    "gumbel", "hypergeometric", "laplace", "logistic", "lognormal", "logseries", "multinomial",
    "multivariate_normal", "negative_binomial", "noncentral_chisquare", "noncentral_f", "normal", "pareto",
    "permutation", "poisson", "power", "rand", "randint", "randn", "random", "random_integers", "random_sample",
    "ranf", "rayleigh", "sample", "shuffle", "standard_cauchy", "standard_exponential", "standard_gamma",
    "standard_normal", "standard_t", "tomaxint", "triangular", "uniform", "vonmises", "wald", "weibull", "zipf",
) if hasattr(_REAL, name))
"""Every sampling method of RandomState this numpy has: each goes through the one interception point."""
DATA = {"permutation": "x", "shuffle": "x", "choice": "a"}
"""The argument holding items a draw reorders or chooses from: only their count is part of the law."""


def _plain(value):
    """Return an argument or output as JSON values (arrays as lists, types and dtypes by name)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return getattr(value, "__name__", None) or str(value)


def _bound(method, args, kwargs):
    """Return the call's arguments by name, defaults filled in, items of a data argument replaced by their count."""
    try:
        bound = inspect.signature(getattr(_REAL, method)).bind(None, *args, **kwargs)
        bound.apply_defaults()
        named = {k: v for k, v in bound.arguments.items() if k != "self"}
    except (TypeError, ValueError):
        named = dict(kwargs, **{"arg%d" % i: a for i, a in enumerate(args)})
    data = DATA.get(method)
    if data in named and not isinstance(named[data], (int, np.integer)):
        named[data] = {"items": int(np.shape(named[data])[0]) if np.ndim(named[data]) else 0}
    return {k: _plain(v) for k, v in named.items()}


def _indices(state, method, args, kwargs):
    """Return the indices a draw on data picks (its items' count from the real call), drawn from `state`."""
    items = args[0] if args else kwargs.get(DATA[method])
    n = len(items)
    if method == "choice":
        rest = dict(kwargs)
        rest.pop("a", None)
        return _REAL.choice(state, n, *args[1:], **rest)
    return _REAL.permutation(state, n)


def _applied(method, args, kwargs, idx):
    """Return the output of a draw on data from its indices (shuffle: in place, None)."""
    items = args[0] if args else kwargs.get(DATA[method])
    if method == "shuffle":
        items[:] = np.asarray(items)[idx] if isinstance(items, np.ndarray) else [items[i] for i in idx]
        return None
    return np.asarray(items)[idx]


def _on_data(method, args, kwargs):
    """Return True for a draw on data: permutation, shuffle or choice given an array rather than a count."""
    if method not in DATA:
        return False
    items = args[0] if args else kwargs.get(DATA[method])
    return not isinstance(items, (int, np.integer))


class _Intercepting(_REAL):
    """A RandomState whose sampling methods all go through `_call` (numpy's calls from its own methods do not)."""

    def __init__(self, seed):
        super().__init__(seed)
        self._inside = False

    def _fresh(self, method, args, kwargs):
        """Return a real draw: indices for a draw on data, else numpy's output."""
        if _on_data(method, args, kwargs):
            return _indices(self, method, args, kwargs)
        return getattr(_REAL, method)(self, *args, **kwargs)


def _intercept(method):
    real = getattr(_REAL, method)

    def intercepted(self, *args, **kwargs):
        if self._inside:
            return real(self, *args, **kwargs)
        self._inside = True
        try:
            return self._call(method, args, kwargs)
        finally:
            self._inside = False

    intercepted.__name__ = method
    return intercepted


for _method in METHODS:
    setattr(_Intercepting, _method, _intercept(_method))


class Recording(_Intercepting):
    """A RandomState seeded with `seed` that keeps every call in `tape`: (method, arguments, noise, output)."""

    def __init__(self, seed):
        super().__init__(seed)
        self.tape = []

    def _call(self, method, args, kwargs):
        noise = self._fresh(method, args, kwargs)
        output = _applied(method, args, kwargs, noise) if _on_data(method, args, kwargs) else noise
        self.tape.append({"method": method, "arguments": _bound(method, args, kwargs), "noise": noise})
        return output

    def primitive(self, name, arguments, draw):
        """Return `draw()`, a library's own noise primitive (drawn elsewhere than this state), kept in `tape` as a call."""
        noise = draw()
        self.tape.append({"method": name, "arguments": _plain(arguments), "noise": noise})
        return noise


class Replaying(_Intercepting):
    """A RandomState that answers the calls of `tape` with their recorded noise and keeps each difference."""

    def __init__(self, tape, seed):
        super().__init__(seed)
        self.tape, self.position, self.divergences = tape, 0, []

    def _answer(self, method, arguments, fresh):
        """Return the next call's recorded noise, or `fresh()` when the call differs from it (kept as a divergence)."""
        index = self.position
        self.position += 1
        recorded = self.tape[index] if index < len(self.tape) else None
        kind = _kind(recorded, method, arguments)
        if kind:
            self.divergences.append({"index": index, "kind": kind, "method": method, "arguments": arguments})
            return fresh()
        noise = recorded["noise"]
        return noise.copy() if isinstance(noise, (np.ndarray, list)) else noise

    def _call(self, method, args, kwargs):
        noise = self._answer(method, _bound(method, args, kwargs), lambda: self._fresh(method, args, kwargs))
        return _applied(method, args, kwargs, noise) if _on_data(method, args, kwargs) else noise

    def primitive(self, name, arguments, draw):
        """Return the noise recorded for the same call of a library's own primitive, or `draw()` when the call differs."""
        return self._answer(name, _plain(arguments), draw)

    def finish(self):
        """Note the calls of the tape the run on D′ did not make (one divergence of count)."""
        if self.position < len(self.tape):
            self.divergences.append({"index": self.position, "kind": "count", "method": "", "arguments": {}})


def _kind(recorded, method, arguments):
    """Return how a call differs from the recorded one ("count", "method", "size", "law"), or "" when it is the same."""
    if recorded is None:
        return "count"
    if recorded["method"] != method:
        return "method"
    differ = {k for k in set(arguments) | set(recorded["arguments"]) if arguments.get(k) != recorded["arguments"].get(k)}
    if not differ:
        return ""
    return "size" if differ <= {"size", DATA.get(method)} else "law"


class AsGenerator:
    """The `numpy.random.Generator` face of a RandomState: `integers` and `random` drawn by the state's recorded methods.

    For a library that draws through a Generator (Tumult Core's `prng()`):
    `integers(low, high)` is `randint(low, high)` (one more with `endpoint`),
    uniform on the same integers, so the law is the one the library asked
    for; any other Generator method is an AttributeError (never a silent
    draw from elsewhere).
    """

    def __init__(self, state):
        self.state = state

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        """Return integers uniform on [low, high) ([low, high] with `endpoint`), drawn by the state's `randint`."""
        low, high = (0, low) if high is None else (low, high)
        return self.state.randint(low, high + 1 if endpoint else high, size=size, dtype=dtype)

    def random(self, size=None, dtype=np.float64, out=None):
        """Return uniforms on [0, 1), drawn by the state's `random_sample`."""
        if out is not None or np.dtype(dtype) != np.float64:
            raise TypeError("a replayed Generator draws float64 uniforms without `out` only")
        return self.state.random_sample(size)


def _getrandbits(state):
    """Return Python's `getrandbits(k)` drawn from `state`: 64 bits a draw (`randint` on uint64), the last one of k mod 64."""

    def getrandbits(k):
        bits, value = int(k), 0
        while bits > 0:
            step = min(bits, 64)
            value = (value << step) | int(state.randint(0, 2**step, dtype=np.uint64))
            bits -= step
        return value

    return getrandbits


MODULE_METHODS = tuple(name for name in METHODS if callable(getattr(np.random, name, None)))
"""The sampling functions numpy's module offers (`np.random.laplace`, ...): bound to its global state, looked up by name."""


PYTHON_DRAWS = ("random", "getrandbits")
"""The two methods of Python's `random.Random` every other one draws through."""


@contextlib.contextmanager
def routed(state):
    """Route, for the block, numpy's global sampling functions and Python's `random` module to `state`.

    numpy: each of `MODULE_METHODS` looked up on `numpy.random` is the
    state's method, and `np.random.seed` does nothing (a library's reseeding
    would otherwise move the global state). Python's `random`: its shared
    instance's `random()` and `getrandbits()` (through which `choice`,
    `uniform`, `shuffle`, `gauss`, ... draw) come from `state`, and
    `random.seed` does nothing. A name bound before the block (`from
    numpy.random import choice`) still draws from the global state, which
    `replay`'s watch then names: an escape is reported, never replayed.
    """
    saved = [(np.random, name, getattr(np.random, name)) for name in MODULE_METHODS + ("seed",)]
    saved += [(random, name, getattr(random, name)) for name in PYTHON_DRAWS + ("seed",)]
    for name in MODULE_METHODS:
        setattr(np.random, name, getattr(state, name))
    np.random.seed = random.seed = lambda *args, **kwargs: None
    draws = {"random": lambda: float(state.random_sample()), "getrandbits": _getrandbits(state)}
    for name in PYTHON_DRAWS:  # the module's names and its instance's, through which its other functions draw
        setattr(random, name, draws[name])
        setattr(random._inst, name, draws[name])
    try:
        yield state
    finally:
        for module, name, value in saved:
            setattr(module, name, value)
        for name in PYTHON_DRAWS:
            del random._inst.__dict__[name]


def _global_states():
    """Return numpy's global state and Python's random state, in a form that compares with ==."""
    state = np.random.get_state()
    return state[0], state[1].tobytes(), state[2:], random.getstate()


class _Watch:
    """Names, when the block ends, numpy's global state or Python's random module if the block drew from them."""

    def __enter__(self):
        self.found, self.before = [], _global_states()
        return self

    def __exit__(self, *exc):
        after = _global_states()
        if after[:3] != self.before[:3]:
            self.found.append("numpy's global random state (np.random.*)")
        if after[3] != self.before[3]:
            self.found.append("Python's random module")
        return False


def _same(a, b):
    """Return True when two releases are the same (as JSON: NaN equal to NaN)."""
    return json.dumps(_plain(a), allow_nan=True) == json.dumps(_plain(b), allow_nan=True)


def replay(run0, run1, seed):
    """Return the JSON record of `run0(rs)` on a `Recording(seed)` and `run1(rs)` on its `Replaying` (one release each).

    `run0` runs once first on a plain state, its release dropped, so that the
    modules a first call imports are loaded before the watched runs; then
    once more on D with its own draws replayed: a release that differs
    drew from a source the state does not reach (Python's `secrets`, a
    generator of its own, noise drawn in C or Rust), named in `outside`.
    Keys: release0, release1 (None when run1 raised: `failure` says how),
    tape (each draw: method, arguments, noise), divergences, outside (the
    sources a run drew from besides the state it was handed).
    """
    run0(_REAL(seed))  # once unwatched: what the first call imports (and the draws imports make) is not the run's
    recording = Recording(seed)
    with _Watch() as watch0:
        release0 = run0(recording)
    itself = Replaying(recording.tape, (seed + 2) % 2**32)
    if not _same(run0(itself), release0) or itself.divergences:
        watch0.found.append("a source besides the random state it is handed (replayed on D with its own draws, its "
                            "release came out different)")
    replaying = Replaying(recording.tape, (seed + 1) % 2**32)
    release1, failure = None, ""
    with _Watch() as watch1:
        try:
            release1 = _plain(run1(replaying))
        except Exception as exc:  # the adversary sees a failure: a release of its own
            failure = ("%s: %s" % (type(exc).__name__, exc))[:120]
    replaying.finish()
    tape = [dict(d, noise=_plain(d["noise"])) for d in recording.tape]
    return json.dumps({"release0": _plain(release0), "release1": release1, "failure": failure, "tape": tape,
                       "divergences": replaying.divergences, "outside": sorted(set(watch0.found + watch1.found))},
                      allow_nan=True)
