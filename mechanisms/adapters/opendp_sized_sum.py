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

import importlib.util
from typing import Any, Callable

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.neighbours import by_relation, of_length
from dpaudit.mechanisms.records import NumberRecords
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = ["opendp_sized_sum", "sized_sum_mechanism", "sized_sum_inputs"]



def sized_sum_inputs(owner: str, epsilon: float, lower: float, upper: float, size: int) -> dict[str, Any]:
    lo = check_real(lower, "lower", owner)
    return {"epsilon": check_real(epsilon, "epsilon", owner, low=0.0, low_open=True), "lower": lo,
            "upper": check_real(upper, "upper", owner, low=lo, low_open=True), "size": check_int(size, "size", owner)}


def sized_sum_mechanism(name: str, sampler: Callable[[Any, int, np.random.Generator], np.ndarray], claim: float,
               params: dict[str, Any], text: str) -> Mechanism:
    """Return the sized sum `name`: claim ε as the library states it, replace-one on exactly `size` records in the bounds."""
    n, lo, hi = params["size"], params["lower"], params["upper"]
    d0 = np.full(n, lo)
    d1 = d0.copy()
    d1[0] = hi
    records = NumberRecords(lo, hi)
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent  # dp_accounting: loaded when one is built

    return Mechanism(
        name=name, sampler=sampler, claim=Claim(claim, 0.0, Relation.REPLACE_ONE), event=EpsilonDeltaDpEvent(claim),
        default_pair=(d0, d1), neighbours=of_length(n, by_relation("replace-one", records=records)), params=params,
        description=text,
    )


def opendp_sized_sum(*, epsilon: float = 1.0, lower: float = 0.0, upper: float = 1.0, size: int = 10) -> Mechanism:
    """Return OpenDP 0.16's `make_sum` on floats of known count `size` with Laplace noise (see the module)."""
    import opendp.prelude as dp
    from dpaudit.mechanisms.adapters.opendp import in_rust

    dp.enable_features("contrib")
    params = sized_sum_inputs("opendp_sized_sum", epsilon, lower, upper, size)
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

    return sized_sum_mechanism("opendp_sized_sum", in_rust(sample), claim, {**params, "scale": scale, "opendp": dp.__version__},
                      f"OpenDP {dp.__version__} make_sum on {params['size']} floats in "
                      f"[{params['lower']:g}, {params['upper']:g}] >> then_laplace({scale:.6g}).")


if importlib.util.find_spec("opendp") is not None:
    register("opendp_sized_sum", expected="consistent", suite_trials=0.005)(opendp_sized_sum)
