"""Privacy amplification: by Poisson subsampling and by shuffling."""

from __future__ import annotations

import math

from dpaudit.validation import check_delta, check_epsilon, check_int, check_real

__all__ = ["amplified_epsilon", "poisson_subsampled", "shuffled_epsilon", "shuffling_condition", "smith_subsampled"]


def poisson_subsampled(*, epsilon: float, delta: float = 0.0, q: float) -> tuple[float, float]:
    """Return (log(1 + q(e^ε − 1)), qδ): an (ε, δ)-DP mechanism run on a Poisson q-subsample.

    Tight for the add/remove relation (attained by randomized response).
    Li, Qardaji, Su, "On sampling, anonymization, and differential privacy",
    ASIACCS 2012, Thm 1; Balle, Barthe, Gaboardi, "Privacy Amplification by
    Subsampling: Tight Analyses via Couplings and Divergences", NeurIPS 2018, Thm 8.
    """
    epsilon = check_epsilon(epsilon, "epsilon", "poisson_subsampled")
    delta = check_delta(delta, "delta", "poisson_subsampled")
    q = check_real(q, "q", "poisson_subsampled", low=0.0, high=1.0)
    return amplified_epsilon(epsilon, q), q * delta


def amplified_epsilon(epsilon: float, q: float) -> float:
    """Return log(1 + q(e^ε − 1)), computed as ε + log(q + (1 − q)e^−ε) so it never overflows."""
    if q == 0.0 or epsilon == 0.0:
        return 0.0
    if math.isinf(epsilon):
        return math.inf
    return epsilon + math.log(q + (1.0 - q) * math.exp(-epsilon))


def smith_subsampled(*, epsilon: float, q: float) -> float:
    """Return 2qε, Smith's bound for an ε-DP mechanism on a q-subsample; valid for ε ≤ 1.

    Adam Smith, "Differential privacy and the secrecy of the sample" (blog
    post, 2009). Looser than `poisson_subsampled`, kept for comparison; raises
    InvalidParameterError for ε > 1, where the lemma does not apply.
    """
    epsilon = check_real(epsilon, "epsilon", "smith_subsampled", low=0.0, high=1.0)
    q = check_real(q, "q", "smith_subsampled", low=0.0, high=1.0)
    return 2.0 * q * epsilon


def shuffling_condition(*, epsilon0: float, num_users: int, delta: float) -> bool:
    """Return True when ε0 ≤ log(n / (16 log(4/δ))), where `shuffled_epsilon`'s closed form applies.

    The paper states the condition with log(2/δ); the authors' code (apple/
    ml-shuffling-amplification, `closedformanalysis`) uses the stricter
    log(4/δ), which is used here.
    """
    epsilon0 = check_epsilon(epsilon0, "epsilon0", "shuffling_condition")
    n = check_int(num_users, "num_users", "shuffling_condition")
    delta = check_real(delta, "delta", "shuffling_condition", low=0.0, high=1.0, low_open=True, high_open=True)
    return 16.0 * math.log(4.0 / delta) < n and epsilon0 <= math.log(n / (16.0 * math.log(4.0 / delta)))


def shuffled_epsilon(*, epsilon0: float, num_users: int, delta: float) -> float:
    """Return ε of n shuffled ε0-LDP reports at δ (Feldman, McMillan, Talwar, arXiv 2012.12803, Thm 3.1).

    With a = 8√(e^ε0 log(4/δ)/n) + 8e^ε0/n, returns
    log(1 + (1 − e^{−ε0})/(1 + e^{−ε0}/(1 + a)) · a), the form in the
    authors' code, which is at least the paper's
    log(1 + (e^ε0 − 1)/(e^ε0 + 1) · a). Holds for neighbouring datasets of n
    users differing in one user's data (replace-one). Outside
    `shuffling_condition` returns ε0 (shuffling is post-processing of the
    n independent reports). Never above ε0.
    """
    epsilon0 = check_epsilon(epsilon0, "epsilon0", "shuffled_epsilon")
    n = check_int(num_users, "num_users", "shuffled_epsilon")
    delta = check_real(delta, "delta", "shuffled_epsilon", low=0.0, high=1.0, low_open=True, high_open=True)
    if not shuffling_condition(epsilon0=epsilon0, num_users=n, delta=delta):
        return epsilon0
    a = 8.0 * math.sqrt(math.exp(epsilon0) * math.log(4.0 / delta) / n) + 8.0 * math.exp(epsilon0) / n
    factor = -math.expm1(-epsilon0) / (1.0 + math.exp(-epsilon0) / (1.0 + a))
    return min(epsilon0, math.log1p(factor * a))
