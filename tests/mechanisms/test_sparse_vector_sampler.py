"""The sparse vector samplers draw each ⊤ from its law given the threshold noise: the same law as adding Laplace noise.

The reference below is the algorithm as written (Lyu, Su, Li, VLDB 2017,
Algs 1, 2, 4): answers + ν_i ≥ T + ρ with ν_i drawn. The flags are compared
by a chi-square test of homogeneity on the index of the first ⊤ (m + 1
cells, the whole output for c = 1) at a fixed seed; with 2·10⁵ outputs per
side a change of 0.5% in a cell's mass of 10% would be seen (power > 0.99),
and a correct sampler fails at level 10⁻⁴.
"""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.mechanisms.builtins.sparse_vector import cut_off
from dpaudit.mechanisms.registry import get_mechanism

N = 200_000
LEVEL = 1e-4


def _reference(name: str, data: np.ndarray, size: int, rng: np.random.Generator, *, eps: float, t: float) -> np.ndarray:
    answers = np.asarray(data, dtype=float)
    m = len(answers)
    if name == "sparse_vector_dwork_roth":
        noisy = answers + rng.laplace(0.0, 4 / eps, (size, m))
        rho = rng.laplace(0.0, 2 / eps, size)
        above = np.empty((size, m), dtype=bool)
        for i in range(m):
            above[:, i] = noisy[:, i] >= t + rho
            rho = np.where(above[:, i], rng.laplace(0.0, 2 / eps, size), rho)
        return cut_off(above, 1)
    rho_scale, nu_scale = {"sparse_vector": (2 / eps, 4 / eps), "sparse_vector_lee_clifton": (4 / eps, 4 / (3 * eps))}[name]
    rho = rng.laplace(0.0, rho_scale, (size, 1))
    return cut_off(answers + rng.laplace(0.0, nu_scale, (size, m)) >= t + rho, 1)


def _first_above(flags: np.ndarray) -> np.ndarray:
    """Return the count of outputs per index of the first ⊤ (m where there is none)."""
    hit = flags == 1
    first = np.where(hit.any(axis=1), hit.argmax(axis=1), flags.shape[1])
    return np.bincount(first, minlength=flags.shape[1] + 1)


@pytest.mark.parametrize("name", ["sparse_vector", "sparse_vector_dwork_roth", "sparse_vector_lee_clifton"])
@pytest.mark.parametrize("which", [0, 1])
def test_the_sampler_has_the_law_of_the_algorithm_as_written(name, which):
    from scipy.stats import chi2_contingency

    mech = get_mechanism(name, epsilon=0.5, threshold=0.5)
    data = mech.default_pair[which]
    ours = mech.sample(data, N, np.random.default_rng(1))
    theirs = _reference(name, data, N, np.random.default_rng(2), eps=0.5, t=0.5)
    assert set(np.unique(ours)) <= {-1, 0, 1}
    table = np.array([_first_above(ours), _first_above(theirs)])
    table = table[:, table.sum(axis=0) > 0]
    assert chi2_contingency(table).pvalue > LEVEL
