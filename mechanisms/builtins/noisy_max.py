"""Report-noisy-max (Dwork & Roth, Claim 3.9) and a known-broken variant that leaks the noisy value.

Data are query answers of sensitivity 1 (neighbours: ‖d0 − d1‖∞ ≤ 1, the
convention of StatDP and DP-Sniper). Laplace noise of scale 2/ε makes the
index ε-DP for arbitrary (non-monotone) sensitivity-1 queries.
"""

from __future__ import annotations

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.neighbours import answers_within
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = ["noisy_max_with_value", "report_noisy_max"]


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
        noisy = _noisy(data, 2.0 / eps, size, rng)
        index = np.argmax(noisy, axis=1)
        return np.column_stack([index, np.take_along_axis(noisy, index[:, None], axis=1)[:, 0]])

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
