"""The sparse vector technique (SVT): the correct algorithms and the broken variants of the literature.

Lyu, Su, Li, "Understanding the Sparse Vector Technique for Differential
Privacy", VLDB 2017 (arXiv 1603.01699), Figure 1, Algs 1–6; numerical SVT of
Wang, Ding, Wang, Kifer, Zhang, PLDI 2019 (as implemented in DP-Sniper,
Bichsel et al., IEEE S&P 2021). Data are answers to `num_queries` queries of
sensitivity 1 (neighbours: ‖d0 − d1‖∞ ≤ 1, the StatDP/DP-Sniper convention);
T is the public threshold, c the cut-off (number of ⊤ answers before the
algorithm stops).

Output of the ⊤/⊥ variants: one int per query, 1 = ⊤, 0 = ⊥, −1 = not
answered (stopped). Variants that release values return the flags followed by
one value per query (0 where none is released).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism, Sampler
from dpaudit.mechanisms.neighbours import answers_within
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = [
    "cut_off",
    "numerical_sparse_vector",
    "pattern",
    "sparse_vector",
    "sparse_vector_dwork_roth",
    "sparse_vector_lee_clifton",
    "sparse_vector_no_cutoff",
    "sparse_vector_no_query_noise",
    "sparse_vector_noisy_value",
]

ABOVE, BELOW, STOPPED = 1, 0, -1


def pattern(name: str, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (1, …, 1) and a StatDP-style pattern (Ding et al., CCS 2018) on m answers.

    "one_below_rest_above": (0, 2, …, 2); "half_half": (2, …, 2, 0, …, 0);
    "last_above_rest_below": (0, …, 0, 2), the order in which a run of ⊥
    followed by one ⊤ costs most.
    """
    if name == "one_below_rest_above":
        other = np.concatenate([[0.0], np.full(m - 1, 2.0)])
    elif name == "half_half":
        other = np.concatenate([np.full(m // 2, 2.0), np.zeros(m - m // 2)])
    else:
        other = np.concatenate([np.zeros(m - 1), [2.0]])
    return np.ones(m), other


def cut_off(above: np.ndarray, c: int | None) -> np.ndarray:
    """Return the flags of a (size, m) boolean ⊤ matrix, queries after the c-th ⊤ marked STOPPED."""
    flags = above.astype(np.int8)
    if c is not None:
        before = np.cumsum(above, axis=1, dtype=np.int32) - above
        flags[before >= c] = STOPPED
    return flags


def _noise_reaches(gap: np.ndarray, scale: float, rng: np.random.Generator, columns: np.ndarray | None = None,
                   shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Return one draw of [ν ≥ gap[..., columns]] per entry of `shape`, ν ~ Laplace(0, `scale`) independent: a uniform below the tail.

    `columns` maps each query to its column of `gap` (queries with equal
    answers share a column, so the tail is computed once per distinct answer);
    None: every column, `shape` that of `gap`.

    P[ν ≥ x] = ½e^{−x/b} for x ≥ 0, 1 − ½e^{x/b} below: the same law as
    comparing a Laplace draw, at the cost of a uniform instead of a logarithm
    (`tests/mechanisms/test_sparse_vector_sampler.py`).
    """
    shape = gap.shape if shape is None else shape
    columns = slice(None) if columns is None else columns
    x = gap / scale
    half_tail = 0.5 * np.exp(-np.abs(x))
    return rng.random(shape) < np.where(x >= 0, half_tail, 1.0 - half_tail)[..., columns]


def _above(data: np.ndarray, size: int, rng: np.random.Generator, *, threshold: float, rho_scale: float,
           nu_scale: float) -> np.ndarray:
    """Return the (size, m) ⊤ matrix [a_i + ν_i ≥ T + ρ]: ρ ~ Lap(`rho_scale`) per trial, ν_i ~ Lap(`nu_scale`) i.i.d.

    Given ρ the ν_i are independent, so each flag is drawn from its
    conditional law (`_noise_reaches`), its tail computed once per distinct answer.
    """
    answers = np.asarray(data, dtype=float)
    rho = rng.laplace(0.0, rho_scale, (size, 1))
    if nu_scale == 0:
        return answers >= threshold + rho
    distinct, columns = np.unique(answers, return_inverse=True)
    return _noise_reaches(threshold + rho - distinct, nu_scale, rng, columns, (size, len(answers)))


def _check(owner: str, epsilon: float, num_queries: int, cutoff: int, threshold: float) -> tuple[float, int, int, float]:
    eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)
    m = check_int(num_queries, "num_queries", owner, low=2)
    return eps, m, check_int(cutoff, "cutoff", owner), check_real(threshold, "threshold", owner)


def _svt(name: str, eps: float, m: int, c: int | None, t: float, sample: Sampler, *, event: dp_event.DpEvent,
         pair: str, text: str) -> Mechanism:
    params = {"epsilon": eps, "num_queries": m, "threshold": t} | ({} if c is None else {"cutoff": c})
    return Mechanism(
        name=name,
        sampler=sample,
        claim=Claim(eps, 0.0),
        event=event,
        default_pair=pattern(pair, m),
        neighbours=answers_within(1.0),
        params=params,
        description=text,
    )


@register("sparse_vector", expected="consistent")
def sparse_vector(*, epsilon: float = 1.0, num_queries: int = 10, cutoff: int = 1, threshold: float = 1.0) -> Mechanism:
    """Return SVT with ρ = Lap(2/ε), ν_i = Lap(4c/ε), stop after c ⊤: ε-DP (Lyu et al. Alg 1, Thm 2)."""
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps, m, c, t = _check("sparse_vector", epsilon, num_queries, cutoff, threshold)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return cut_off(_above(data, size, rng, threshold=t, rho_scale=2 / eps, nu_scale=4 * c / eps), c)

    return _svt("sparse_vector", eps, m, c, t, sample, event=EpsilonDeltaDpEvent(eps, 0.0),
                pair="last_above_rest_below", text="Sparse vector (Lyu et al. Alg 1).")


@register("sparse_vector_dwork_roth", expected="consistent")
def sparse_vector_dwork_roth(
    *, epsilon: float = 1.0, num_queries: int = 10, cutoff: int = 1, threshold: float = 1.0
) -> Mechanism:
    """Return SVT with ρ = Lap(2c/ε) redrawn after each ⊤, ν_i = Lap(4c/ε): ε-DP.

    Dwork & Roth 2014, Alg 2 (Lyu et al. Alg 2).
    """
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps, m, c, t = _check("sparse_vector_dwork_roth", epsilon, num_queries, cutoff, threshold)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        answers = np.asarray(data, dtype=float)
        rho = rng.laplace(0.0, 2 * c / eps, size)
        above = np.empty((size, m), dtype=bool)
        for i in range(m):  # the threshold noise depends on earlier answers; loop over queries, not trials
            above[:, i] = _noise_reaches(t + rho - answers[i], 4 * c / eps, rng)  # [a_i + ν_i ≥ t + ρ], ν_i ~ Lap(4c/ε)
            rho = np.where(above[:, i], rng.laplace(0.0, 2 * c / eps, size), rho)
        return cut_off(above, c)

    return _svt("sparse_vector_dwork_roth", eps, m, c, t, sample, event=EpsilonDeltaDpEvent(eps, 0.0),
                pair="last_above_rest_below", text="Sparse vector (Dwork & Roth; Lyu et al. Alg 2).")


@register("sparse_vector_noisy_value", expected="violation")
def sparse_vector_noisy_value(
    *, epsilon: float = 1.0, num_queries: int = 10, cutoff: int = 1, threshold: float = 1.0
) -> Mechanism:
    """BUGGY: SVT that releases q_i + ν_i for each ⊤, ν_i = Lap(2c/ε) (Roth 2011; Lyu et al. Alg 3).

    Not ε-DP: its privacy loss grows with the number of queries (Lyu et al.
    §3); at fixed threshold noise each query costs at most ε/(2c), so it is
    (mε/(2c))-DP for m queries, the event used here.
    """
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps, m, c, t = _check("sparse_vector_noisy_value", epsilon, num_queries, cutoff, threshold)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        answers = np.asarray(data, dtype=float)
        noisy = answers + rng.laplace(0.0, 2 * c / eps, (size, m))
        flags = cut_off(noisy >= t + rng.laplace(0.0, 2 / eps, (size, 1)), c)
        return np.hstack([flags, np.where(flags == ABOVE, noisy, 0.0)])

    return _svt("sparse_vector_noisy_value", eps, m, c, t, sample, event=EpsilonDeltaDpEvent(m * eps / (2 * c), 0.0),
                pair="last_above_rest_below", text="SVT releasing the noisy answer (Lyu et al. Alg 3).")


@register("sparse_vector_lee_clifton", expected="violation")
def sparse_vector_lee_clifton(
    *, epsilon: float = 1.0, num_queries: int = 10, cutoff: int = 1, threshold: float = 1.0
) -> Mechanism:
    """BUGGY: SVT with ρ = Lap(4/ε), ν_i = Lap(4/(3ε)) (no factor c); true ε = (1 + 6c)ε/4.

    Lee & Clifton 2014; Lyu et al. Alg 4 and Thm 6 (0.175 at ε = 0.1, c = 1).
    """
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps, m, c, t = _check("sparse_vector_lee_clifton", epsilon, num_queries, cutoff, threshold)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return cut_off(_above(data, size, rng, threshold=t, rho_scale=4 / eps, nu_scale=4 / (3 * eps)), c)

    return _svt("sparse_vector_lee_clifton", eps, m, c, t, sample,
                event=EpsilonDeltaDpEvent((1 + 6 * c) * eps / 4, 0.0), pair="half_half",
                text="SVT with the Lee–Clifton noise scales (Lyu et al. Alg 4).")


@register("sparse_vector_no_query_noise", expected="violation")
def sparse_vector_no_query_noise(*, epsilon: float = 1.0, num_queries: int = 10, threshold: float = 1.0) -> Mechanism:
    """BUGGY: SVT with threshold noise Lap(2/ε) only and no cut-off; true ε = ∞.

    Stoddard, Chen, Machanavajjhala 2014; Lyu et al. Alg 5: answers 1 and
    (2, …, 2, 0, …, 0) give ⊤/⊥ patterns impossible on (1, …, 1).
    """
    from dp_accounting import dp_event

    eps, m, _, t = _check("sparse_vector_no_query_noise", epsilon, num_queries, 1, threshold)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return cut_off(_above(data, size, rng, threshold=t, rho_scale=2 / eps, nu_scale=0.0), None)

    return _svt("sparse_vector_no_query_noise", eps, m, None, t, sample, event=dp_event.NonPrivateDpEvent(),
                pair="half_half", text="SVT without query noise (Lyu et al. Alg 5).")


@register("sparse_vector_no_cutoff", expected="violation")
def sparse_vector_no_cutoff(*, epsilon: float = 1.0, num_queries: int = 10, threshold: float = 1.0) -> Mechanism:
    """BUGGY: SVT with ρ = Lap(2/ε), ν_i = Lap(2/ε) and no cut-off (Chen et al. 2015; Lyu et al. Alg 6).

    Not ε-DP for any ε independent of the number of queries m (Lyu et al.);
    at fixed threshold noise each query costs at most ε/2, so it is (mε/2)-DP,
    the event used here.
    """
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps, m, _, t = _check("sparse_vector_no_cutoff", epsilon, num_queries, 1, threshold)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return cut_off(_above(data, size, rng, threshold=t, rho_scale=2 / eps, nu_scale=2 / eps), None)

    return _svt("sparse_vector_no_cutoff", eps, m, None, t, sample, event=EpsilonDeltaDpEvent(m * eps / 2, 0.0),
                pair="half_half", text="SVT without cut-off (Lyu et al. Alg 6).")


@register("numerical_sparse_vector", expected="consistent")
def numerical_sparse_vector(
    *, epsilon: float = 1.0, num_queries: int = 10, cutoff: int = 1, threshold: float = 1.0
) -> Mechanism:
    """Return numerical SVT: ρ = Lap(3/ε), ν_i = Lap(6c/ε), release q_i + Lap(3c/ε) for each ⊤: ε-DP.

    Wang et al., PLDI 2019 (as in DP-Sniper): ε/3 for the threshold, ε/3 for
    the comparisons (Lyu et al. Alg 1 with ε1 = ε2 = ε/3), ε/3 for the c
    released values (basic composition).
    """
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps, m, c, t = _check("numerical_sparse_vector", epsilon, num_queries, cutoff, threshold)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        answers = np.asarray(data, dtype=float)
        flags = cut_off(_above(answers, size, rng, threshold=t, rho_scale=3 / eps, nu_scale=6 * c / eps), c)
        released = answers + rng.laplace(0.0, 3 * c / eps, (size, m))
        return np.hstack([flags, np.where(flags == ABOVE, released, 0.0)])

    return _svt("numerical_sparse_vector", eps, m, c, t, sample, event=EpsilonDeltaDpEvent(eps, 0.0),
                pair="one_below_rest_above", text="Numerical sparse vector (Wang et al. 2019).")
