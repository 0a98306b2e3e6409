"""dpaudit's worker for `external_python`: serve a function of this environment in dpaudit's external protocol.

Run by path by another interpreter, where dpaudit is not installed, so it
uses the standard library only (and numpy when this environment has it):

    PYTHON external_worker.py module:attr [FOLDER ...]          serve requests on stdin
    PYTHON external_worker.py --json module:attr [FOLDER ...]   the same, replies in JSON only
    PYTHON external_worker.py --check module:attr [FOLDER ...]  import it, exit 0 (or 2 with the reason)

`module` is imported from the current directory, then the FOLDERs, then
the environment's own packages (this script's folder is not searched, so
dpaudit's modules never shadow the user's). Per request
{"size":N,"seed":S,"data":D} the function is called as

    fn(data, size=N, seed=S)    if it has a parameter named seed,
    fn(data, rng, size=N)       if it has one named rng (numpy.random.default_rng(S)),
    fn(data, N, S)              otherwise,

with `data` a numpy array (a dict of arrays for columns) when numpy is
here, else lists. The reply is {"outputs":[...]} (or {"error":"..."} when
the function raises), or, when it returns a numpy array of numbers (and
--json is not given), the protocol's binary form: a line {"npy":LENGTH}
and the array as LENGTH bytes of .npy, about 25 times faster than
writing and reading the numbers as text. What the function prints goes to standard error,
so that standard output carries replies only. The protocol itself is
documented in dpaudit.mechanisms.external.processes.
"""

import importlib
import inspect
import io
import json
import os
import sys
import traceback

try:
    import numpy
except ImportError:  # an environment without numpy: data are lists, outputs must be lists
    numpy = None

__all__ = ["main"]


def _fail(message):
    sys.stderr.write(message.rstrip(".") + ".\n")
    sys.exit(2)


def _load(reference, folders):
    """Return the function `module:attr`, importing from the current directory and `folders` first."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    sys.path[0:0] = [os.getcwd()] + [os.path.abspath(f) for f in folders]
    module_name, _, attr = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except BaseException as exc:  # any failure of the user's import, even SystemExit, is one sentence
        traceback.print_exc()
        _fail("cannot import module '%s' (%s: %s)" % (module_name, type(exc).__name__, exc))
    fn = module
    for part in attr.split("."):
        if not hasattr(fn, part):
            _fail("module '%s' has no attribute '%s'" % (module_name, attr))
        fn = getattr(fn, part)
    if not callable(fn):
        _fail("'%s' is a %s, not a function" % (reference, type(fn).__name__))
    return fn


def _convention(fn):
    """Return how `fn` is called: "seed", "rng" or "positional" (see the module docstring)."""
    try:
        names = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return "positional"
    if "seed" in names:
        return "seed"
    if "rng" in names:
        if numpy is None:
            _fail("the function takes rng, a numpy generator, and this environment has no numpy; take seed instead")
        return "rng"
    return "positional"


def _dataset(value):
    if numpy is None:
        return value
    if isinstance(value, dict):
        return {k: numpy.asarray(v) for k, v in value.items()}
    return numpy.asarray(value)


def _plain(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError("an output of type %s cannot be written as JSON" % type(value).__name__)


def _reply(fn, convention, request, binary):
    """Return the reply (bytes, newline included) to one request: JSON, or with `binary` a line {"npy":LENGTH} and .npy bytes."""
    try:
        size, seed, data = int(request["size"]), int(request["seed"]), _dataset(request["data"])
        if convention == "seed":
            outputs = fn(data, size=size, seed=seed)
        elif convention == "rng":
            outputs = fn(data, numpy.random.default_rng(seed), size=size)
        else:
            outputs = fn(data, size, seed)
        if binary and isinstance(outputs, numpy.ndarray) and outputs.ndim and outputs.dtype.kind in "biuf":
            raw = io.BytesIO()
            numpy.save(raw, outputs, allow_pickle=False)
            return b'{"npy":%d}\n' % raw.tell() + raw.getvalue()
        if hasattr(outputs, "tolist"):
            outputs = outputs.tolist()
        if not isinstance(outputs, (list, tuple)):
            raise TypeError("the function returned a %s, not a list or an array of %d outputs" % (type(outputs).__name__, size))
        return json.dumps({"outputs": list(outputs)}, default=_plain).encode() + b"\n"
    except Exception as exc:  # the mechanism failed: say so in the reply, and on stderr with the traceback
        traceback.print_exc()
        return json.dumps({"error": "%s: %s" % (type(exc).__name__, exc)}).encode() + b"\n"


def main(argv):
    """Serve requests (or, with --check, only load the function); return the exit status."""
    check, binary = argv[:1] == ["--check"], argv[:1] != ["--json"] and numpy is not None
    args = argv[1:] if argv[:1] in (["--check"], ["--json"]) else argv
    if not args or ":" not in args[0]:
        _fail("usage: external_worker.py [--check | --json] module:attr [FOLDER ...]")
    replies = os.fdopen(os.dup(1), "wb")  # the protocol's channel; fd 1 and sys.stdout now go to stderr
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    fn = _load(args[0], args[1:])
    convention = _convention(fn)
    if check:
        return 0
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            return 0
        replies.write(_reply(fn, convention, json.loads(line), binary))
        replies.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
