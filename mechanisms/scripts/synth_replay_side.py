"""Replays of the synthetic-data generators' tables, INSIDE the generator's environment: every draw recorded on D, replayed on D′.

DataSynthesizer draws from the process's global sources: numpy's module
functions (`np.random.laplace` for its noisy conditionals, `np.random.choice`
for its exponential mechanism and for sampling the table) and Python's
`random` (the root attribute), after seeding both. SmartNoise Synth draws
its selections, its model's start and its table from the same global
sources (`np.random`, and MWEM's `random.random()`), and its noise from
OpenDP through the two primitives of `snsynth.utils`, `gaussian_noise` and
`laplace_noise` (bound by name in MST's, AIM's and MWEM's modules). Those
are the one interception point of each library: `replay_side.routed(state)`
points the global sources at the replay's state for a fit, and
SmartNoise's two primitives become calls of `state.primitive` (OpenDP's
output on D recorded, the same output handed back on D′ for the same σ
or scale and size: `_opendp_recorded`). `replay_side.replay` records one
fit on `rows` and replays it on `rows1`; a draw through a name bound
before the fit, or OpenDP called by another door, is named there (D
replayed on itself does not give its table back), never replayed.

dpaudit's adapters (`dpaudit.mechanisms.adapters.synth`) reach this
module through the external worker (`synth_replay_side:serve`), a process
apart from the one that serves the audits (`synth_side:serve`), whose fits
it calls (`synth_side._table`, `synth_side._privbayes`). Standard
library, numpy and the generator's library only.
"""

import os
import sys

# This file is loaded with its folder (dpaudit's mechanisms/scripts/) at the front of sys.path; take it off
# again before anything else is imported here, so no script of that folder shadows a module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import contextlib  # noqa: E402
import importlib.util  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

__all__ = ["serve"]


def _sibling(name):
    """Return the module `name` of this folder, loaded by path (the folder is no longer on sys.path)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(_HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REPLAY = _sibling("replay_side")
SYNTH = _sibling("synth_side")


OPENDP_PRIMITIVES = {"gaussian_noise": "opendp_gaussian", "laplace_noise": "opendp_laplace"}
"""SmartNoise's noise primitives (`snsynth.utils`), and the name each call has in a replay's record."""


@contextlib.contextmanager
def _opendp_recorded(state):
    """Make, for the block, each call of SmartNoise's noise primitives one call of `state.primitive` (OpenDP drawing on D).

    Patched where they are bound: `snsynth.utils` and the modules of MST,
    AIM and MWEM. A state without `primitive` (the replay's first, unwatched
    run) lets OpenDP draw as it does.
    """
    import importlib

    import snsynth.utils as utils

    modules = [utils] + [importlib.import_module(m) for m in ("snsynth.mst.mst", "snsynth.aim.aim", "snsynth.mwem")]
    real = {name: getattr(utils, name) for name in OPENDP_PRIMITIVES}
    record = getattr(state, "primitive", None)

    def recorded(name):
        def noise(scale, size=None):
            draw = lambda: real[name](scale, size)  # noqa: E731
            return draw() if record is None else record(OPENDP_PRIMITIVES[name], {"scale": scale, "size": size}, draw)

        return noise

    bound = [(m, name) for m in modules for name in OPENDP_PRIMITIVES if getattr(m, name, None) is real[name]]
    for module, name in bound:
        setattr(module, name, recorded(name))
    try:
        yield
    finally:
        for module, name in bound:
            setattr(module, name, real[name])


def _fit(spec, frame):
    """Return one table of a fresh fit on `frame`: DataSynthesizer's or SmartNoise's, as the audits fit them."""
    if spec.get("library") == "datasynthesizer":
        return SYNTH._privbayes(spec, frame, 0)  # its seeding does nothing while routed
    return SYNTH._table(spec, frame)


def serve(data, size, seed):
    """Return one output: the JSON record of one fit on `rows` (recorded) and one on `rows1` (replayed).

    The request is an audit's (`spec`, `rows`) with the neighbour's rows in
    `rows1`; the release of each fit is its table (rows, columns) of codes.
    """
    if size != 1:
        raise ValueError("a replay is one run on each dataset; asked for %d" % size)
    spec = SYNTH._spec(data)
    if spec.get("release", "table") != "table":
        raise ValueError("a replay here replays tables; got release %r" % spec.get("release"))
    smartnoise = spec.get("library") != "datasynthesizer"

    def run(suffix):
        frame = SYNTH._frame(np.asarray(data["rows" + suffix]), spec["columns"])

        def once(state):
            with REPLAY.routed(state), warnings.catch_warnings(), contextlib.ExitStack() as stack:
                warnings.simplefilter("ignore")
                if smartnoise:
                    stack.enter_context(_opendp_recorded(state))
                return _fit(spec, frame)

        return once

    return [REPLAY.replay(run(""), run("1"), seed)]
