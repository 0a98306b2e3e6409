"""Private selection: the exponential mechanism and report-noisy-max with exponential or Gumbel noise.

Data are query answers (utilities) of sensitivity 1; neighbours satisfy
‖d0 − d1‖∞ ≤ 1, the convention of StatDP (Ding et al., CCS 2018) and
DP-Sniper (Bichsel et al., IEEE S&P 2021). Laplace report-noisy-max is in
`dpaudit.mechanisms.builtins.noisy_max`. Default pairs are the patterns on which DP-Sniper
found the largest privacy loss: (1, …, 1) against (0, 2, …, 2) for the
index, (0, …, 0) against (1, …, 1) for the released value.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism, Sampler
from dpaudit.mechanisms.neighbours import answers_within
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = [
    "exponential_choice",
    "exponential_mechanism",
    "noisy_max_exponential_with_value",
    "noisy_max_gumbel_with_value",
    "report_noisy_max_exponential",
    "report_noisy_max_gumbel",
]


def _check(owner: str, epsilon: float, num_queries: int) -> tuple[float, int]:
    eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)
    return eps, check_int(num_queries, "num_queries", owner, low=2)


def _index_pair(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (1, …, 1) and (0, 2, …, 2): one answer down, the rest up (StatDP's "one below rest above")."""
    return np.ones(m), np.concatenate([[0.0], np.full(m - 1, 2.0)])


def _value_pair(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (0, …, 0) and (1, …, 1): every answer moves up together ("all above")."""
    return np.zeros(m), np.ones(m)


def exponential_choice(utilities: np.ndarray, epsilon: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Return `size` indices drawn with P(i) ∝ exp(ε u_i / 2) (inverse CDF on one uniform per draw)."""
    logits = 0.5 * epsilon * np.asarray(utilities, dtype=float)
    weights = np.exp(logits - logits.max())
    cdf = np.cumsum(weights / weights.sum())
    return np.minimum(np.searchsorted(cdf, rng.random(size), side="right"), len(cdf) - 1)


def _selection(name: str, eps: float, m: int, sample: Sampler, *, releases_value: bool,
               pair: Callable[[int], tuple[np.ndarray, np.ndarray]], text: str) -> Mechanism:
    from dp_accounting import dp_event
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    return Mechanism(
        name=name,
        sampler=sample,
        claim=Claim(eps, 0.0),
        event=dp_event.NonPrivateDpEvent() if releases_value else EpsilonDeltaDpEvent(eps, 0.0),
        default_pair=pair(m),
        neighbours=answers_within(1.0),
        params={"epsilon": eps, "num_queries": m},
        description=text,
    )


@register("exponential_mechanism", expected="consistent")
def exponential_mechanism(*, epsilon: float = 1.0, num_queries: int = 5) -> Mechanism:
    """Return index i with probability ∝ exp(ε u_i / 2): ε-DP for sensitivity-1 utilities.

    McSherry & Talwar, FOCS 2007, Thm 6; Dwork & Roth Thm 3.10.
    """
    eps, m = _check("exponential_mechanism", epsilon, num_queries)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return exponential_choice(data, eps, size, rng)

    return _selection("exponential_mechanism", eps, m, sample, releases_value=False, pair=_index_pair,
                      text="Exponential mechanism, weights exp(ε u / 2).")


@register("report_noisy_max_exponential", expected="consistent")
def report_noisy_max_exponential(*, epsilon: float = 1.0, num_queries: int = 5) -> Mechanism:
    """Return argmax_i (u_i + Exp(2/ε)), the index only: ε-DP.

    Ding et al., CCS 2018, Alg. 6 (StatDP's ReportNoisyMax2); equal in law to
    permute-and-flip (McKenna & Sheldon, NeurIPS 2020, Thm 2).
    """
    eps, m = _check("report_noisy_max_exponential", epsilon, num_queries)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.argmax(np.asarray(data, dtype=float) + rng.exponential(2.0 / eps, (size, m)), axis=1)

    return _selection("report_noisy_max_exponential", eps, m, sample, releases_value=False, pair=_index_pair,
                      text="Index of the noisy maximum, Exp(2/ε) noise.")


@register("report_noisy_max_gumbel", expected="consistent")
def report_noisy_max_gumbel(*, epsilon: float = 1.0, num_queries: int = 5) -> Mechanism:
    """Return argmax_i (u_i + Gumbel(2/ε)), the index only: ε-DP.

    The Gumbel-max trick makes it the exponential mechanism with weights
    exp(ε u / 2) (Durfee & Rogers, NeurIPS 2019, Lemma 4.2).
    """
    eps, m = _check("report_noisy_max_gumbel", epsilon, num_queries)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.argmax(np.asarray(data, dtype=float) + rng.gumbel(0.0, 2.0 / eps, (size, m)), axis=1)

    return _selection("report_noisy_max_gumbel", eps, m, sample, releases_value=False, pair=_index_pair,
                      text="Index of the noisy maximum, Gumbel(2/ε) noise.")


@register("noisy_max_exponential_with_value", expected="violation")
def noisy_max_exponential_with_value(*, epsilon: float = 1.0, num_queries: int = 5) -> Mechanism:
    """BUGGY: report-noisy-max with Exp(2/ε) noise that returns the noisy maximum value; true ε = ∞.

    Ding et al., CCS 2018, Alg. 8 (StatDP's ReportNoisyMax4). One-sided noise:
    on all-1 answers the value is ≥ 1 always, on all-0 answers it is < 1 with
    positive probability. Output: the value.
    """
    eps, m = _check("noisy_max_exponential_with_value", epsilon, num_queries)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.max(np.asarray(data, dtype=float) + rng.exponential(2.0 / eps, (size, m)), axis=1)

    return _selection("noisy_max_exponential_with_value", eps, m, sample, releases_value=True, pair=_value_pair,
                      text="Noisy maximum value with Exp(2/ε) noise (true ε = ∞).")


@register("noisy_max_gumbel_with_value", expected="violation")
def noisy_max_gumbel_with_value(*, epsilon: float = 1.0, num_queries: int = 5) -> Mechanism:
    """BUGGY: report-noisy-max with Gumbel(2/ε) noise that also returns the noisy maximum; true ε = ∞.

    The maximum of Gumbel(μ_i, β) is Gumbel(β log Σ e^{μ_i/β}, β); moving
    every answer by 1 shifts it by 1, and a Gumbel shift has a privacy loss
    that grows like e^{−x/β} in the lower tail (unbounded). Output: (index, value).
    """
    eps, m = _check("noisy_max_gumbel_with_value", epsilon, num_queries)

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        noisy = np.asarray(data, dtype=float) + rng.gumbel(0.0, 2.0 / eps, (size, m))
        return np.column_stack([np.argmax(noisy, axis=1), noisy.max(axis=1)])

    return _selection("noisy_max_gumbel_with_value", eps, m, sample, releases_value=True, pair=_value_pair,
                      text="Noisy maximum index and value with Gumbel(2/ε) noise (true ε = ∞).")
