"""How many runs an assumption-free audit would need, if the scores' trade-off were the Gaussian one that GDP fits.

A GDP bound (Nasr et al., USENIX Security 2023) sees ε of μ-GDP; the
assumption-free threshold estimator (Clopper–Pearson rates at a threshold)
needs many more runs to certify the same, because ε at δ = 10⁻⁵ lives in
the tails. This projection takes the scores' point estimate μ̂ (from their
AUC: μ̂ = √2·Φ⁻¹(AUC), exact for two unit Gaussians μ apart) and returns the
smallest R whose expected counts, at the best threshold, give Clopper–Pearson
rates at β/2 each that certify more than the claim. It is a plan, not a
bound: it assumes the Gaussian shape and counts equal to their expectations.

μ̂ is a point estimate, and on a correct mechanism it is noise around 0
(μ̂ = 0.01 projects about a million runs). So `projected_runs_of` projects
only from scores that separate members from non-members at the audit's
confidence: the one-sided Mann–Whitney U test of "AUC = ½" (scipy) must
reject at level β = 1 − confidence; otherwise the observed μ̂ is within
noise of 0 and no projection is printed; `withheld_reason` says in one
line which of the two conditions failed.
"""

from __future__ import annotations

import numpy as np
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.clopper_pearson import rate_upper_bound
from dpaudit.audit.theory.profiles import gdp_epsilon

__all__ = ["MAX_RUNS", "auc_mu", "projected_runs", "projected_runs_of", "separates", "withheld_reason"]

MIN_RUNS, MAX_RUNS = 10, 10**9
THRESHOLDS = 400


def auc_mu(obs: Observations) -> float:
    """Return μ̂ = √2·Φ⁻¹(AUC) of the scores (members above non-members; ties count ½), 0 without both classes."""
    from scipy.stats import norm, rankdata

    scores, member = np.asarray(obs.scores, dtype=float), np.asarray(obs.truth, dtype=bool)
    n1, n0 = int(member.sum()), int((~member).sum())
    if n1 == 0 or n0 == 0:
        return 0.0
    ranks = rankdata(scores)
    auc = (ranks[member].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)
    return float(np.sqrt(2.0) * norm.ppf(np.clip(auc, 1e-12, 1 - 1e-12)))


def _certified(mu: float, runs: int, delta: float, beta: float) -> float:
    """Return the ε that `runs` runs (half of them members) certify at their expected counts, best threshold."""
    from scipy.stats import norm

    half = runs // 2
    t = np.linspace(-4.0, mu + 8.0, THRESHOLDS)
    fpr = rate_upper_bound(np.floor(norm.sf(t) * half), half, beta / 2)
    fnr = rate_upper_bound(np.floor(norm.cdf(t - mu) * half), half, beta / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.log(np.maximum(1.0 - fnr - delta, 0.0) / fpr)
    return float(np.nanmax(np.where(np.isfinite(eps), eps, -np.inf)))


def projected_runs(mu: float, *, claim_epsilon: float, delta: float, confidence: float) -> int | None:
    """Return the runs an assumption-free threshold audit would need to certify above the claim if the scores were μ-GDP.

    None when even MAX_RUNS would not (e.g. μ-GDP's own ε is at most the claim:
    no number of runs certifies more). Found by bisection on log R (the
    certified ε grows with R), to within 2%.
    """
    beta = 1.0 - confidence
    if mu <= 0 or gdp_epsilon(delta=delta, mu=mu) <= claim_epsilon or _certified(mu, MAX_RUNS, delta, beta) <= claim_epsilon:
        return None
    low, high = MIN_RUNS, MAX_RUNS
    while high - low > max(1, low // 50):
        mid = max(low + 1, int(np.sqrt(low * high)))
        low, high = (low, mid) if _certified(mu, mid, delta, beta) > claim_epsilon else (mid, high)
    return high


def separates(obs: Observations, confidence: float) -> bool:
    """Return True when members' scores rank above non-members' at `confidence`: the one-sided Mann–Whitney U test
    of AUC = ½ rejects at level 1 − `confidence` (exact in law under the null of exchangeable scores; ties averaged)."""
    from scipy.stats import mannwhitneyu

    scores, member = np.asarray(obs.scores, dtype=float), np.asarray(obs.truth, dtype=bool)
    if member.all() or not member.any():
        return False
    return bool(mannwhitneyu(scores[member], scores[~member], alternative="greater").pvalue <= 1.0 - confidence)


def projected_runs_of(obs: Observations, *, claim_epsilon: float, delta: float, confidence: float) -> int | None:
    """Return `projected_runs` of the scores' μ̂, or None when they do not separate members at `confidence`
    (`separates`): a μ̂ within noise of 0 projects nothing meaningful."""
    if not separates(obs, confidence):
        return None
    return projected_runs(auc_mu(obs), claim_epsilon=claim_epsilon, delta=delta, confidence=confidence)


def withheld_reason(obs: Observations | None, *, claim_epsilon: float, delta: float, confidence: float) -> str:
    """Return in one line why `projected_runs_of` printed no projection for the scores `obs` (the rule itself when
    `obs` is None: scores not kept, or several canaries of which another may have been the one projected)."""
    rule = (f"a projection is printed only when the scores separate members from non-members at confidence "
            f"{confidence:g} (one-sided Mann–Whitney U test of AUC = ½) and a μ-GDP trade-off of their μ̂ would "
            f"certify above the claim within {MAX_RUNS:,} runs")
    if obs is None:
        return f"none: {rule}"
    mu = auc_mu(obs)
    if not separates(obs, confidence):
        return (f"none: the scores do not separate members from non-members at confidence {confidence:g} (one-sided "
                f"Mann–Whitney U test of AUC = ½), so their μ̂ = {mu:.3f} is within noise of 0")
    return (f"none: the scores' μ̂ = {mu:.3f} (from their AUC) gives μ-GDP ε = {gdp_epsilon(delta=delta, mu=mu):.3f} "
            f"at δ = {delta:g}; no number of runs up to {MAX_RUNS:,} certifies above the claim ε = {claim_epsilon:g}")
