"""An older OpenDP release's bounded float sum, run INSIDE its own environment ("opendp-0.4.0"): never imported by dpaudit.

OpenDP 0.4.0 predates the fix of Casacuberta, Shoemate, Vadhan and Wagaman
(CCS 2022): its `make_sized_bounded_sum` on floats states the sensitivity
(U − L)·d_in/2 of real numbers while it sums doubles one after the other.
dpaudit's `opendp_0_4_sized_sum` adapter reaches this module through the
external worker (`external_python` with `path=` this folder); it imports
opendp (and numpy) only. The chain is the one 0.4's docs show,
`make_sized_bounded_sum(size, bounds) >> make_base_laplace(scale)` with the
features "contrib" and "floating-point" enabled, built the same way as the
fixed successor's in dpaudit (`opendp.make_sized_sum`):

- the scale: `binary_search_param(chain, d_in=2, d_out=epsilon)` (one record
  replaced is symmetric distance 2 on a dataset of known size);
- the claim: the smallest ε that the chain's own `check(2, ε)` accepts, by
  `binary_search` (0.4 has no `map`).

Requests are dicts of columns: `kind` = `describe` (with `params`, JSON:
epsilon, lower, upper, size) answers one JSON text (version, scale, claim);
`kind` = `sum` with `params` and the dataset `x` (exactly `size` records)
answers N releases, one chain call each. OpenDP draws from its own
generator: the request's seed is not used.
"""

import os
import sys

# This file is loaded with its folder (dpaudit's mechanisms/scripts/) at the front of sys.path; take it off
# again before anything else is imported here, so no script of that folder shadows a module.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import json  # noqa: E402

import numpy as np  # noqa: E402

__all__ = ["describe", "serve"]


def _chain(params):
    """Return scale ↦ `make_sized_bounded_sum(size, (lower, upper)) >> make_base_laplace(scale)`."""
    from opendp.meas import make_base_laplace
    from opendp.mod import enable_features
    from opendp.trans import make_sized_bounded_sum

    enable_features("contrib", "floating-point")
    bounds = (float(params["lower"]), float(params["upper"]))
    size = int(params["size"])
    return lambda scale: make_sized_bounded_sum(size, bounds) >> make_base_laplace(scale)


def describe(params):
    """Return the release, the scale found for ε at d_in = 2, and the claim: the least ε its check(2, ε) accepts."""
    from importlib.metadata import version

    from opendp.mod import binary_search, binary_search_param

    chain = _chain(params)
    scale = binary_search_param(chain, d_in=2, d_out=float(params["epsilon"]))
    measurement = chain(scale)
    claim = binary_search(lambda eps: measurement.check(2, eps), bounds=(0.0, 2.0 * float(params["epsilon"])))
    if not measurement.check(2, claim):
        raise ValueError("OpenDP's check refuses the ε its own binary search returned")
    return {"opendp": version("opendp"), "scale": float(scale), "epsilon": float(claim)}


def serve(data, size, seed):
    """Return `size` releases of the chain on the dataset `x`, or, for `describe`, one JSON text per output."""
    kind = str(np.asarray(data["kind"]).ravel()[0])
    params = json.loads(str(np.asarray(data["params"]).ravel()[0]))
    if kind == "describe":
        return [json.dumps(describe(params))] * size
    if kind != "sum":
        raise ValueError("unknown kind %r; the kinds are describe, sum" % kind)
    rows = [float(v) for v in np.asarray(data["x"], dtype=float).ravel()]
    measurement = _chain(params)(describe(params)["scale"])
    return np.array([measurement(rows) for _ in range(size)], dtype=float)
