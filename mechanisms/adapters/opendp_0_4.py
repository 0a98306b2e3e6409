"""OpenDP 0.4.0's sized bounded float sum, from before the floating-point fix, in the environment "opendp-0.4.0".

`make_sized_bounded_sum(n, (L, U)) >> make_base_laplace(scale)` run by
mechanisms/scripts/opendp_side.py in its own environment, audited as its
fixed successor `opendp_sized_sum` is (opendp_sized_sum.py, which see: the
same claim path, relation and default pair).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
from dpaudit.mechanisms.adapters.opendp_sized_sum import sized_sum_inputs, sized_sum_mechanism
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.environments import Environment, declare, environment_python
from dpaudit.mechanisms.external.processes import ExternalProcess, external_python
from dpaudit.mechanisms.registry import register

__all__ = ["OLD_RELEASE", "opendp_0_4_sized_sum"]

OLD_RELEASE = declare(Environment(
    name="opendp-0.4.0",
    packages=("opendp==0.4.0", "numpy<2"),
    python="3.11",
    description="OpenDP 0.4.0, before the floating-point sum fix (Casacuberta et al. 2022): opendp_0_4_sized_sum",
    check="import opendp.trans",
))
SIDE = Path(__file__).resolve().parents[1] / "scripts" / "opendp_side.py"


@functools.lru_cache(maxsize=None)
def _process(python: str) -> ExternalProcess:
    """Return the one process of `python` serving `opendp_side:serve`."""
    return external_python(python, "opendp_side:serve", epsilon=1.0, name="OpenDP 0.4.0", path=[str(SIDE.parent)],
                           check=False, timeout=3600.0).sampler


class SideSum:
    """`sampler(data, size, rng)`: the old release's chain on `data`, in its environment. Picklable.

    Not replayable (`not_replayable` says why, and `audit_replay` refuses it in one sentence).
    """

    not_replayable = ("OpenDP 0.4 draws its noise in Rust, from the operating system's entropy, in its own environment, "
                      "which the seed dpaudit sends it does not reach")

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
    params = sized_sum_inputs("opendp_0_4_sized_sum", epsilon, lower, upper, size)
    process = _process(str(environment_python(OLD_RELEASE.name)))
    request = {"kind": ["describe"], "params": [json.dumps(params, sort_keys=True)]}
    described = json.loads(str(process(request, 1, np.random.default_rng(0))[0]))
    return sized_sum_mechanism("opendp_0_4_sized_sum", SideSum(process, params), described["epsilon"],
                      {**params, "scale": described["scale"], "opendp": described["opendp"]},
                      f"OpenDP {described['opendp']} make_sized_bounded_sum on {params['size']} floats in "
                      f"[{params['lower']:g}, {params['upper']:g}] >> make_base_laplace({described['scale']:.6g}).")


register("opendp_0_4_sized_sum", expected="consistent", suite_trials=0.005, environment=OLD_RELEASE.name)(
    opendp_0_4_sized_sum)
