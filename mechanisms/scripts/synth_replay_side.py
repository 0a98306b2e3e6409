"""Replays of DataSynthesizer's PrivBayes, INSIDE its environment: every draw recorded on D and replayed on D′.

DataSynthesizer draws from the process's global sources: numpy's module
functions (`np.random.laplace` for its noisy conditionals, `np.random.choice`
for its exponential mechanism and for sampling the table) and Python's
`random` (the root attribute), after seeding both. Those two are its one
interception point: `replay_side.routed(state)` points them at the
replay's state for a fit, and `replay_side.replay` records one fit on
`rows` and replays it on `rows1` (a draw through a name bound before the
fit, which still reaches the global state, is named there, never
replayed). dpaudit's adapters (`dpaudit.mechanisms.adapters.synth`) reach
this module through the external worker (`synth_replay_side:serve`), a
process apart from the one that serves the audits (`synth_side:serve`),
whose fits it calls (`synth_side._privbayes`). Standard library, numpy and
DataSynthesizer only.

SmartNoise Synth is not replayed here: its noise is drawn by OpenDP in
Rust (the adapters say so in `not_replayable`).
"""

import os
import sys

# This file is loaded with its folder (dpaudit's mechanisms/scripts/) at the front of sys.path; take it off
# again before anything else is imported here, so no script of that folder shadows a module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

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


def serve(data, size, seed):
    """Return one output: the JSON record of one PrivBayes fit on `rows` (recorded) and one on `rows1` (replayed).

    The request is an audit's (`spec`, `rows`) with the neighbour's rows in
    `rows1`; the release of each fit is its table (rows, columns) of codes.
    """
    if size != 1:
        raise ValueError("a replay is one run on each dataset; asked for %d" % size)
    spec = SYNTH._spec(data)
    if spec.get("library") != "datasynthesizer" or spec.get("release", "table") != "table":
        raise ValueError("a replay here replays DataSynthesizer's tables; got %r" % spec.get("generator"))

    def run(suffix):
        frame = SYNTH._frame(np.asarray(data["rows" + suffix]), spec["columns"])

        def once(state):
            with REPLAY.routed(state), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return SYNTH._privbayes(spec, frame, 0)  # its seeding does nothing while routed

        return once

    return [REPLAY.replay(run(""), run("1"), seed)]
