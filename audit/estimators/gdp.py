"""Gaussian-DP estimator: a lower confidence bound on μ, then ε at the target δ.

μ-GDP (Dong, Roth, Su, arXiv 1905.02383) means every test between the
neighbouring outputs has FNR ≥ G_μ(FPR) = Φ(Φ⁻¹(1 − FPR) − μ). So a test with
FPR ≤ FPR_ub and FNR ≤ FNR_ub certifies μ ≥ Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub)
(Nasr et al., "Tight Auditing of Differentially Private Machine Learning",
USENIX Security 2023). That statement needs no assumption: the mechanism is
not μ-GDP for any smaller μ. The ε reported beside it is the ε of μ-GDP at
δ, which bounds the mechanism's ε only if its trade-off curve is Gaussian
(true for Gaussian noise and DP-SGD); results carry that assumption.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.clopper_pearson import rate_upper_bound
from dpaudit.audit.estimators.dominating_pair import GaussianDP
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.thresholds import BestOf, ThresholdStrategy, select_threshold
from dpaudit.audit.theory.profiles import gdp_epsilon
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_delta, check_int, check_probability_open

__all__ = [
    "GDP_ASSUMPTION",
    "check_gdp_delta",
    "gdp_from_counts",
    "gdp_lower_bound",
    "gdp_result",
    "mu_from_rates",
    "mu_lower_bound",
]

GDP_ASSUMPTION = "the trade-off curve is Gaussian (μ-GDP)"


def check_gdp_delta(delta: object, owner: str) -> float:
    """Return a validated δ in (0, 1): the ε of μ-GDP at δ = 0 is infinite for every μ > 0, so δ = 0 is refused."""
    delta = check_delta(delta, "delta", owner)
    if delta == 0.0:
        raise InvalidParameterError(
            f"{owner} reports the ε of μ-GDP at δ, which is infinite at δ = 0 for every μ > 0; "
            "pass a delta > 0 (e.g. 1e-5), or use a pure-ε estimator such as threshold_lower_bound."
        )
    return delta


def mu_lower_bound(fp: Any, n0: Any, fn: Any, n1: Any, *, beta: float) -> np.ndarray:
    """Return max(0, Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub)) for fixed tests.

    A test has `fp` false positives of `n0` and `fn` false negatives of `n1`.
    FPR_ub, FNR_ub are Clopper–Pearson upper bounds at β/2 each, so with
    probability ≥ 1 − β the mechanism is not μ-GDP for any μ below the value
    (Nasr et al. 2023; no Gaussian assumption is needed for this statement).
    Arrays broadcast, one bound each.
    """
    return np.maximum(_mu_bound_objective(fp, n0, fn, n1, beta=beta), 0.0)


def _mu_bound_objective(fp: Any, n0: Any, fn: Any, n1: Any, *, beta: float) -> np.ndarray:
    """Return `mu_lower_bound` before its clamp at 0, for ranking tests that certify nothing."""
    return mu_from_rates(rate_upper_bound(fp, n0, beta / 2), rate_upper_bound(fn, n1, beta / 2))


def mu_from_rates(fpr_ub: Any, fnr_ub: Any) -> np.ndarray:
    """Return Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub), unclamped (−inf where a bound is 1).

    With upper confidence bounds on the rates of any test, a positive value
    is a μ the mechanism is not μ-GDP for (Dong, Roth, Su; Nasr et al. 2023).
    """
    from scipy.special import ndtri

    with np.errstate(invalid="ignore"):
        mu = -ndtri(np.asarray(fpr_ub, dtype=float)) - ndtri(np.asarray(fnr_ub, dtype=float))
    return np.nan_to_num(mu, nan=-np.inf, posinf=np.inf, neginf=-np.inf)


def gdp_result(
    mu: float,
    *,
    delta: float,
    confidence: float,
    method: str,
    trials: int,
    details: Mapping[str, Any],
    fpr: float | None = None,
    fnr: float | None = None,
    guesses: int | None = None,
    correct: int | None = None,
) -> LowerBound:
    """Return the LowerBound of a certified μ: ε of μ-GDP at δ, labelled with its assumption.

    `details` gains `mu` and `mu_statement`, the assumption-free part of the result.
    """
    statement = (
        f"with confidence {confidence:.4g}, not μ-GDP for any μ < {mu:.4g} "
        "(holds without the Gaussian assumption)"
    )
    return LowerBound(
        epsilon=gdp_epsilon(delta=delta, mu=mu), confidence=confidence, method=method, delta=delta,
        trials=trials, fpr=fpr, fnr=fnr, assumption=GDP_ASSUMPTION,
        details={**details, "mu": mu, "mu_statement": statement}, guesses=guesses, correct=correct,
    )


def gdp_from_counts(
    fp: int, n0: int, fn: int, n1: int, *, delta: float, confidence: float = 0.95
) -> LowerBound:
    """Return the GDP bound of one fixed test: fp of n0 D0 outputs rejected, fn of n1 D1 kept.

    For the two-dataset audit, whose test was chosen on separate samples: μ
    from Clopper–Pearson bounds at β/2 each (β = 1 − confidence), ε of μ-GDP
    at `delta`, labelled as holding only under the Gaussian trade-off assumption.
    """
    owner = "gdp_from_counts"
    n0, n1 = check_int(n0, "n0", owner), check_int(n1, "n1", owner)
    fp = check_int(fp, "fp", owner, low=0)
    fn = check_int(fn, "fn", owner, low=0)
    delta = check_gdp_delta(delta, owner)
    beta = 1.0 - check_probability_open(confidence, "confidence", owner)
    mu = float(mu_lower_bound(fp, n0, fn, n1, beta=beta))
    return gdp_result(
        mu, delta=delta, confidence=confidence, method="gdp", trials=n0 + n1,
        fpr=fp / n0, fnr=fn / n1, details={"fp": fp, "n0": n0, "fn": fn, "n1": n1},
    )


def gdp_lower_bound(
    obs: Observations,
    *,
    delta: float,
    confidence: float = 0.95,
    strategy: ThresholdStrategy = BestOf(),
    rng: np.random.Generator | int,
) -> LowerBound:
    """Return the GDP bound of the best threshold test on `obs`, paid for by `strategy`.

    By default the test is calibrated on μ-GDP's dominating pair, the two
    unit Gaussians μ apart (`dominating_pair`); the other strategies bound
    the chosen test's FPR and FNR.

    With probability ≥ `confidence` the mechanism is not μ-GDP for μ <
    details['mu']; the ε is that of μ-GDP at `delta` and bounds the
    mechanism's ε only under the Gaussian trade-off assumption (Nasr et al. 2023).

    Args:
        obs: the scores (higher = member) with their truth.
        delta: > 0 (the ε of μ-GDP at δ = 0 is infinite); confidence: of the bound.
        strategy: how the threshold is paid for; rng: for the Monte Carlo replicates and the splits.

    Returns:
        A `LowerBound` (method "gdp") with μ in its details and the assumption named.

    Raises:
        InvalidParameterError: at δ = 0, or for observations without both classes.
    """
    owner = "gdp_lower_bound"
    delta = check_gdp_delta(delta, owner)
    beta = 1.0 - check_probability_open(confidence, "confidence", owner)
    test = select_threshold(
        obs, strategy=strategy, beta=beta, rng=np.random.default_rng(rng),
        objective=mu_from_rates, envelope=GaussianDP(),
    )
    return gdp_result(
        test.value, delta=delta, confidence=confidence, method="gdp", trials=test.n0 + test.n1,
        fpr=test.fp / test.n0, fnr=test.fn / test.n1,
        details={"canaries": obs.size, **test.details()}, guesses=test.n0 + test.n1, correct=test.correct,
    )
