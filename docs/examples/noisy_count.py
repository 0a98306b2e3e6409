"""The ten-line audit's mechanism as a module, for `PYTHONPATH=docs/examples dpaudit audit noisy_count:mech`.

A Laplace count of records in [0, 1] with scale 1: 1-DP under add/remove, and
`null_record=0.0` declares that a 0 adds nothing to the count; `default_pair` is
the pair the command line audits when no `--d0`/`--d1` is given.
"""

import numpy as np
from dpaudit.mechanisms import blackbox


def noisy_count(data, rng):
    """Return sum(data) plus Laplace noise of scale 1."""
    return np.sum(data) + rng.laplace(0.0, 1.0)


mech = blackbox(noisy_count, epsilon=1.0, delta=0.0, name="mine", null_record=0.0, default_pair=([0.0], [1.0]))
