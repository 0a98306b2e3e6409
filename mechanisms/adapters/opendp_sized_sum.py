"""OpenDP's bounded float sum on a dataset of known size, in a release from before the floating-point fix and in 0.16.

Casacuberta, Shoemate, Vadhan and Wagaman (CCS 2022) showed that summing
doubles one after the other can move a bounded sum by far more than the
sensitivity stated for real numbers. OpenDP fixed its sums after that
(0.16 states a sensitivity that covers the rounding); OpenDP 0.4.0, on the
registry for Python 3.11, is from before. Both are audited the same way:

- `opendp_sized_sum` (OpenDP 0.16, in dpaudit's environment):
  `make_sum(vector_domain(atom_domain(bounds=(L, U), nan=False), size=n),
  symmetric_distance()) >> then_laplace(scale)`;
- `opendp_0_4_sized_sum` (OpenDP 0.4.0, in the environment "opendp-0.4.0",
  through `opendp_side.py`): `make_sized_bounded_sum(n, (L, U)) >>
  make_base_laplace(scale)`, the chain 0.4's docs show.

The same claim path for both: the scale from the library's
`binary_search_param(chain, d_in=2, d_out=ε)`, the claim the least ε that
the measurement's own `check(2, ε)` accepts (`binary_search`; 0.4 has no
`map`). Relation: one record replaced in a dataset of exactly n records
(symmetric distance 2), records in [L, U]. Default pair, from the declared
bounds only: n records at L against the same with the first at U. Upper
bound: the claim (dpaudit has no analysis of float rounding). Each output
is one call of the chain; OpenDP draws from its own generator.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from typing import Any, Callable

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.environments import Environment, declare, environment_python
from dpaudit.mechanisms.events import EpsilonDeltaDpEvent
from dpaudit.mechanisms.external.processes import ExternalProcess, external_python
from dpaudit.mechanisms.neighbours import by_relation, of_length
from dpaudit.mechanisms.records import NumberRecords
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = ["OLD_RELEASE", "opendp_0_4_sized_sum", "opendp_sized_sum"]

OLD_RELEASE = declare(Environment(
    name="opendp-0.4.0",
    packages=("opendp==0.4.0", "numpy<2"),
    python="3.11",
    description="OpenDP 0.4.0, before the floating-point sum fix (Casacuberta et al. 2022): opendp_0_4_sized_sum",
    check="import opendp.trans",
))
SIDE = Path(__file__).resolve().parents[1] / "scripts" / "opendp_side.py"


def _inputs(owner: str, epsilon: float, lower: float, upper: float, size: int) -> dict[str, Any]:
    lo = check_real(lower, "lower", owner)
    return {"epsilon": check_real(epsilon, "epsilon", owner, low=0.0, low_open=True), "lower": lo,
            "upper": check_real(upper, "upper", owner, low=lo, low_open=True), "size": check_int(size, "size", owner)}


def _mechanism(name: str, sampler: Callable[[Any, int, np.random.Generator], np.ndarray], claim: float,
               params: dict[str, Any], text: str) -> Mechanism:
    """Return the sized sum `name`: claim ε as the library states it, replace-one on exactly `size` records in the bounds."""
    n, lo, hi = params["size"], params["lower"], params["upper"]
    d0 = np.full(n, lo)
    d1 = d0.copy()
    d1[0] = hi
    records = NumberRecords(lo, hi)
    return Mechanism(
        name=name, sampler=sampler, claim=Claim(claim, 0.0, Relation.REPLACE_ONE), event=EpsilonDeltaDpEvent(claim),
        default_pair=(d0, d1), neighbours=of_length(n, by_relation("replace-one", records=records)), params=params,
        description=text,
    )


def opendp_sized_sum(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0, size: int = 10) -> Mechanism:
    """Return OpenDP 0.16's `make_sum` on floats of known count `size` with Laplace noise (see the module)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    params = _inputs("opendp_sized_sum", epsilon, lower, upper, size)
    domain = dp.vector_domain(dp.atom_domain(bounds=(params["lower"], params["upper"]), nan=False), size=params["size"])
    total = dp.t.make_sum(domain, dp.symmetric_distance())

    def chain(scale: float) -> Any:
        return total >> dp.m.then_laplace(scale)

    scale = float(dp.binary_search_param(chain, d_in=2, d_out=params["epsilon"]))
    measurement = chain(scale)
    claim = float(dp.binary_search(lambda eps: measurement.check(2, eps), bounds=(0.0, 2.0 * params["epsilon"])))

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        rows = [float(x) for x in np.asarray(data, dtype=float).ravel()]
        return np.array([measurement(rows) for _ in range(size)], dtype=float)

    return _mechanism("opendp_sized_sum", sample, claim, {**params, "scale": scale, "opendp": dp.__version__},
                      f"OpenDP {dp.__version__} make_sum on {params['size']} floats in "
                      f"[{params['lower']:g}, {params['upper']:g}] >> then_laplace({scale:.6g}).")


@functools.lru_cache(maxsize=None)
def _process(python: str) -> ExternalProcess:
    """Return the one process of `python` serving `opendp_side:serve`."""
    return external_python(python, "opendp_side:serve", epsilon=1.0, name="OpenDP 0.4.0", path=[str(SIDE.parent)],
                           check=False, timeout=3600.0).sampler


class SideSum:
    """`sampler(data, size, rng)`: the old release's chain on `data`, in its environment. Picklable."""

    def __init__(self, process: ExternalProcess, params: dict[str, Any]) -> None:
        self.process, self.params = process, params

    def __call__(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Return `size` releases of the chain on the records of `data`."""
        rows = np.asarray(data, dtype=float).ravel()
        return self.process({"kind": ["sum"], "params": [json.dumps(self.params, sort_keys=True)], "x": rows}, size, rng)

    def close(self) -> None:
        """Stop the process."""
        self.process.close()


def opendp_0_4_sized_sum(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0, size: int = 10) -> Mechanism:
    """Return OpenDP 0.4.0's `make_sized_bounded_sum >> make_base_laplace` in its environment (see the module)."""
    params = _inputs("opendp_0_4_sized_sum", epsilon, lower, upper, size)
    process = _process(str(environment_python(OLD_RELEASE.name)))
    request = {"kind": ["describe"], "params": [json.dumps(params, sort_keys=True)]}
    described = json.loads(str(process(request, 1, np.random.default_rng(0))[0]))
    return _mechanism("opendp_0_4_sized_sum", SideSum(process, params), described["epsilon"],
                      {**params, "scale": described["scale"], "opendp": described["opendp"]},
                      f"OpenDP {described['opendp']} make_sized_bounded_sum on {params['size']} floats in "
                      f"[{params['lower']:g}, {params['upper']:g}] >> make_base_laplace({described['scale']:.6g}).")


register("opendp_0_4_sized_sum", expected="consistent", suite_trials=0.005)(opendp_0_4_sized_sum)
if importlib.util.find_spec("opendp") is not None:
    register("opendp_sized_sum", expected="consistent", suite_trials=0.005)(opendp_sized_sum)
