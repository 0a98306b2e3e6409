"""A mechanism that lives in another Python environment, for `dpaudit.mechanisms.external_python`.

Laplace noise of scale 1/ε on the sum of the data: ε-DP for records in
[0, 1] under add/remove. It needs numpy only (not dpaudit):

    from dpaudit.mechanisms.external.processes import external_python
    mech = external_python("/path/to/other/venv/bin/python", "other_env_mechanism:laplace_sum",
                           epsilon=1.0, path=["docs/examples"])

or, from the command line, `dpaudit audit --python /path/to/other/venv/bin/python
other_env_mechanism:laplace_sum --epsilon 1` in this folder.
"""

import numpy as np

__all__ = ["laplace_sum"]

EPSILON = 1.0


def laplace_sum(data, size, seed):
    """Return `size` independent draws of sum(data) + Laplace(1/ε), from a generator seeded by `seed`."""
    rng = np.random.default_rng(seed)
    return float(np.sum(data)) + rng.laplace(0.0, 1.0 / EPSILON, size)
