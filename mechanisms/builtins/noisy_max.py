"""Report-noisy-max (Dwork & Roth, Claim 3.9) and a known-broken variant that leaks the noisy value.

Data are query answers of sensitivity 1 (neighbours: ‖d0 − d1‖∞ ≤ 1, the
convention of StatDP and DP-Sniper). Laplace noise of scale 2/ε makes the
index ε-DP for arbitrary (non-monotone) sensitivity-1 queries.
"""

from __future__ import annotations

import math

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.neighbours import answers_within
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = ["noisy_max_with_value", "report_noisy_max"]

LN2 = math.log(2.0)


def _noisy(data: np.ndarray, scale: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Return `size` rows of answers + Laplace(0, `scale`) noise, each Laplace draw the difference of two Exp(1) draws.

    E1 − E2 is Laplace(0, 1) in law; numpy draws exponentials by its ziggurat,
    faster than the logarithm behind `Generator.laplace`
    (`tests/mechanisms/test_noisy_max_noise.py`).
    """
    answers = np.asarray(data, dtype=float)
    noise = rng.standard_exponential((size, len(answers)))
    noise -= rng.standard_exponential((size, len(answers)))
    noise *= scale
    noise += answers
    return noise


def _laplace_maxima(counts: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Return `size` rows whose column g is the maximum of `counts[g]` i.i.d. Laplace(0, 1) draws.

    Inverse CDF of the maximum: F⁻¹(V^{1/k}) with F the Laplace CDF and V
    uniform, where V^{1/k} = e^{−y} with y = E/k, E ~ Exp(1); so the lower
    tail (y > ln 2) is ln 2 − y and the rest −ln(2(1 − e^{−y})).
    """
    spent = rng.standard_exponential((size, len(counts)))
    spent /= counts
    out = np.negative(spent)
    np.expm1(out, out=out)
    np.negative(out, out=out)
    np.log(out, out=out)
    out += LN2
    np.negative(out, out=out)
    np.subtract(LN2, spent, out=out, where=spent > LN2)
    return out


def _noisy_max(data: np.ndarray, scale: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Return `size` rows (index, value): the arg-max and the maximum of the answers + Laplace(0, `scale`) noise.

    Drawn group by group, exact in law: equal answers form a group, the
    group's noisy maximum is its answer + `scale` times the maximum of its
    size in Laplace draws (`_laplace_maxima`), and the index is a uniform
    member of the group whose maximum is largest (equal answers are
    exchangeable). One exponential per group instead of two per answer
    (`tests/mechanisms/test_noisy_max_noise.py`: the same law as drawing
    every answer's noise). With one group (the default pairs) the arg-max
    over groups and the per-row bound of the member draw are skipped, which
    halves the time per output.
    """
    answers, group_of, counts = np.unique(np.asarray(data, dtype=float), return_inverse=True, return_counts=True)
    maxima = _laplace_maxima(counts, size, rng)
    maxima *= scale
    maxima += answers
    out = np.empty((size, 2))
    if len(answers) == 1:
        out[:, 0] = rng.integers(0, counts[0], size)
        out[:, 1] = maxima[:, 0]
        return out
    group = np.argmax(maxima, axis=1)
    out[:, 1] = np.take_along_axis(maxima, group[:, None], axis=1)[:, 0]
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    members = np.argsort(group_of, kind="stable")
    out[:, 0] = members[first[group] + rng.integers(0, counts[group])]
    return out


def _check(owner: str, epsilon: float, num_queries: int) -> tuple[float, int]:
    eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)
    return eps, check_int(num_queries, "num_queries", owner, low=2)


@register("report_noisy_max", expected="consistent")
def report_noisy_max(*, epsilon: float = 1.0, num_queries: int = 5) -> Mechanism:
    """Return the index of the largest answer + Laplace(2/ε): ε-DP.

    Worst-case pair: (1, 1, ..., 1) against (0, 2, ..., 2), one answer moving
    against all others (Ding et al., CCS 2018; DP-Sniper's "one below, rest above").
    """
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps, m = _check("report_noisy_max", epsilon, num_queries)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.argmax(_noisy(data, 2.0 / eps, size, rng), axis=1)

    d1 = np.full(m, 2.0)
    d1[0] = 0.0
    return Mechanism(
        name="report_noisy_max",
        sampler=sample,
        claim=Claim(eps, 0.0),
        event=EpsilonDeltaDpEvent(eps, 0.0),
        default_pair=(np.ones(m), d1),
        neighbours=answers_within(1.0),
        params={"epsilon": eps, "num_queries": m},
        description="Index of the noisy maximum, Laplace(2/ε) noise.",
    )


@register("noisy_max_with_value", expected="violation")
def noisy_max_with_value(*, epsilon: float = 1.0, num_queries: int = 5) -> Mechanism:
    """BUGGY: report-noisy-max that also returns the noisy maximum value.

    On all-0 against all-1 answers, the value's lower tail behaves like
    m Laplace(2/ε) coordinates moving together, so its privacy loss reaches
    mε/2 (0.25 for m = 5 at ε = 0.1: DP-Sniper, Bichsel et al. S&P 2021).
    Output: (index, value).
    """
    from dpaudit.mechanisms.events import BrokenClaimDpEvent

    eps, m = _check("noisy_max_with_value", epsilon, num_queries)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return _noisy_max(data, 2.0 / eps, size, rng)

    return Mechanism(
        name="noisy_max_with_value",
        sampler=sample,
        claim=Claim(eps, 0.0),
        default_pair=(np.zeros(m), np.ones(m)),
        neighbours=answers_within(1.0),
        params={"epsilon": eps, "num_queries": m},
        event=BrokenClaimDpEvent(),
        description="Report-noisy-max that also releases the noisy maximum (true ε ≥ mε/2).",
    )
