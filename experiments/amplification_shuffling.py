"""`amplification-shuffling`: audits of shuffled 3-ary randomized response against Feldman–McMillan–Talwar.

n users each apply ε0-LDP 3-ary randomized response; the shuffler releases
the reports in random order, i.e. their histogram. The audited pair puts the
target's value 0 or 1 among n − 1 "clones" of value 1. Feldman, McMillan,
Talwar ("Hiding Among the Clones", FOCS 2021, arXiv 2012.12803, Thm 3.1)
bound the shuffled ε at δ. Three forms of their bound are drawn, each named
in the legend; with s = 8√(e^ε0 log(4/δ)/n) and c = 8e^ε0/n:

- the one audited, the mechanism's claim (`shuffled_epsilon`, the closed
  form of the authors' code, apple/ml-shuffling-amplification):
  log(1 + (1 − e^−ε0)/(1 + e^−ε0/(1 + s + c)) · (s + c));
- the paper's Thm 3.1 (`paper_epsilon`): log(1 + (e^ε0 − 1)/(e^ε0 + 1) · (s + c));
- eq. (1) of the source post, C. Canonne, "Privacy Doona: Why We Should
  Hide Among The Clones" (differentialprivacy.org), which folds c into a
  doubled s (`post_epsilon`): log(1 + (e^ε0 − 1)/(e^ε0 + 1) · 2s).

Where the closed form applies (`shuffling_condition`), paper ≤ code ≤
post: the code's factor exceeds (e^ε0 − 1)/(e^ε0 + 1) = (1 − e^−ε0)/(1 + e^−ε0)
since 1 + s + c > 1; and code ≤ post because its factor is at most
2(1 + a)/(2 + a) · (e^ε0 − 1)/(e^ε0 + 1) with a = s + c, and
(1 + a)(s + c) ≤ (2 + a)s ⟺ (1 + a)c ≤ s, which holds as n ≥ 16e^ε0 log(4/δ)
gives c/s ≤ 1/(4 log(4/δ)) and c ≤ 1/(2 log(4/δ)). At ε0 = 1, δ = 1e-4
and n = 500 … 10,000 the code's bound is 8–15% above the paper's and 27–41%
below the post's. The figure sets these beside the exact ε(δ) of this pair
(its two histogram distributions summed on a grid) and the certified lower
bounds: the generic `audit_mechanism`, and the oracle family of thresholds
on the pair's exact log-likelihood ratio (fixed from theory, union bound
over the family).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.theory.amplification import shuffled_epsilon
from dpaudit.audit.theory.roots import smallest_epsilon
from dpaudit.experiments.output import save
from dpaudit.experiments.threshold_tests import certified_epsilon, threshold_boxes
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.builtins.randomized_response import keep_probability
from dpaudit.mechanisms.neighbours import categories_in

__all__ = ["K", "NAME", "exact_pair_epsilon", "pair_distributions", "paper_epsilon", "post_epsilon", "run", "shuffled_rr"]

NAME = "amplification-shuffling"
EPSILON0 = 1.0
K = 3
DELTA = 1e-4
NS_FULL = (500, 1000, 2000, 5000, 10000)
NS_QUICK = (500, 2000)
N_THRESHOLDS = 30


def paper_epsilon(*, epsilon0: float, num_users: int, delta: float) -> float:
    """Return Feldman–McMillan–Talwar's Thm 3.1 as the paper states it (arXiv 2012.12803).

    log(1 + (e^ε0 − 1)/(e^ε0 + 1) · (8√(e^ε0 log(4/δ))/√n + 8e^ε0/n)), stated
    for ε0 ≤ log(n/(16 log(2/δ))); at most `shuffled_epsilon` where that applies.
    """
    scale = math.exp(epsilon0)
    a = 8.0 * math.sqrt(scale * math.log(4.0 / delta)) / math.sqrt(num_users) + 8.0 * scale / num_users
    return math.log1p(math.tanh(epsilon0 / 2.0) * a)


def post_epsilon(*, epsilon0: float, num_users: int, delta: float) -> float:
    """Return eq. (1) of Canonne's post on the clones bound: log(1 + 16 (e^ε0 − 1)/(e^ε0 + 1) √(e^ε0 log(4/δ)/n)).

    C. Canonne, "Privacy Doona: Why We Should Hide Among The Clones",
    differentialprivacy.org; stated for n ≫ e^ε0 log(1/δ). At least
    `shuffled_epsilon` where `shuffling_condition` holds (module docstring).
    Its small-ε0 form ε ≈ ε0·8√(log(4/δ)/n) follows from eq. (1); its eq. (2)
    for ε0 ≫ 1, log(1 + 8√(e^ε0 log(4/δ)/n)), has 8 where eq. (1) gives 16.
    """
    scale = math.exp(epsilon0)
    return math.log1p(16.0 * math.tanh(epsilon0 / 2.0) * math.sqrt(scale * math.log(4.0 / delta) / num_users))


def _report_probabilities(value: int, epsilon0: float) -> np.ndarray:
    """Return the distribution of one 3-ary RR report of `value`."""
    p = keep_probability(epsilon0, K)
    probs = np.full(K, (1.0 - p) / (K - 1))
    probs[value] = p
    return probs


def shuffled_rr(*, epsilon0: float, num_users: int) -> Mechanism:
    """Return the shuffled histogram of n 3-ary RR reports; worst-case-style pair: target 0 or 1 among clones of 1."""
    from dpaudit.mechanisms.events import ShuffledDpEvent

    table = np.stack([_report_probabilities(v, epsilon0) for v in range(K)])

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        values, counts = np.unique(np.asarray(data, dtype=int), return_counts=True)
        hist = np.zeros((size, K), dtype=np.int64)
        for value, count in zip(values, counts):
            hist += rng.multinomial(int(count), table[value], size=size)
        return hist

    d1 = np.ones(num_users, dtype=int)
    d0 = d1.copy()
    d0[0] = 0
    return Mechanism(
        name=f"shuffled 3-ary randomized response (n = {num_users})",
        sampler=sample,
        claim=Claim(shuffled_epsilon(epsilon0=epsilon0, num_users=num_users, delta=DELTA), DELTA, Relation.REPLACE_ONE),
        event=ShuffledDpEvent(epsilon0, num_users),
        default_pair=(d0, d1),
        neighbours=categories_in(K),
        params={"epsilon0": epsilon0, "num_users": num_users, "k": K},
    )


def pair_distributions(epsilon0: float, n: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Return (P0, P1, width): the histogram distributions of the pair on a grid of (c0, c2), c1 = n − c0 − c2.

    The others' reports are Multinomial(n − 1; q, p, q); the target adds one
    report of 0 (D0) or 1 (D1). The grid covers the counts c0, c2 up to
    `width`, more than 12 standard deviations above their mean (mass
    outside below 1e-30).
    """
    from scipy.special import gammaln, logsumexp

    others = _report_probabilities(1, epsilon0)
    q = others[0]
    width = int(min(n, math.ceil(n * q + 12 * math.sqrt(n * q) + 12)))
    c0, c2 = np.meshgrid(np.arange(width + 1), np.arange(width + 1), indexing="ij")

    def log_others(a0: np.ndarray, a2: np.ndarray) -> np.ndarray:
        a1 = n - 1 - a0 - a2
        ok = (a0 >= 0) & (a1 >= 0) & (a2 >= 0)
        a0, a1, a2 = np.maximum(a0, 0), np.maximum(a1, 0), np.maximum(a2, 0)
        value = (gammaln(n) - gammaln(a0 + 1) - gammaln(a1 + 1) - gammaln(a2 + 1)
                 + a0 * math.log(others[0]) + a1 * math.log(others[1]) + a2 * math.log(others[2]))
        return np.where(ok, value, -np.inf)

    shifted = np.stack([log_others(c0 - 1, c2), log_others(c0, c2), log_others(c0, c2 - 1)])
    log_p0 = logsumexp(shifted + np.log(_report_probabilities(0, epsilon0))[:, None, None], axis=0)
    log_p1 = logsumexp(shifted + np.log(_report_probabilities(1, epsilon0))[:, None, None], axis=0)
    return np.exp(log_p0), np.exp(log_p1), width


def exact_pair_epsilon(p0: np.ndarray, p1: np.ndarray, delta: float) -> float:
    """Return the smallest ε with max(Σ(P0 − e^ε P1)₊, Σ(P1 − e^ε P0)₊) ≤ δ: the pair's exact ε(δ)."""

    def hockey(eps: float) -> float:
        return float(max(np.maximum(p0 - math.exp(eps) * p1, 0).sum(), np.maximum(p1 - math.exp(eps) * p0, 0).sum()))

    return smallest_epsilon(hockey, delta)


def run(out_dir: Path, *, quick: bool = False, seed: int = 0) -> dict[str, Any]:
    """Audit the shuffled mechanism for each n; write amplification-shuffling.png/json; return the JSON content."""
    from matplotlib.figure import Figure

    ns = NS_QUICK if quick else NS_FULL
    trials = 100_000 if quick else 1_000_000
    rng = np.random.default_rng(seed)
    rows = []
    for n in ns:
        mech = shuffled_rr(epsilon0=EPSILON0, num_users=n)
        p0, p1, width = pair_distributions(EPSILON0, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_ratio = np.log(p1) - np.log(p0)
        finite = log_ratio[np.isfinite(log_ratio) & (p0 + p1 > 1e-12)]
        cuts = np.linspace(finite.min(), finite.max(), N_THRESHOLDS + 2)[1:-1]

        def score(hist: np.ndarray) -> np.ndarray:
            c0, c2 = np.minimum(hist[:, 0], width), np.minimum(hist[:, 2], width)
            return log_ratio[c0, c2]

        out0, out1 = mech.sample(mech.default_pair[0], trials, rng), mech.sample(mech.default_pair[1], trials, rng)
        oracle = certified_epsilon(threshold_boxes(score(out0), score(out1), cuts, beta=0.05), DELTA)
        result = audit_mechanism(mech, trials=trials, seed=seed)
        rows.append({
            "num_users": n,
            "fmt": shuffled_epsilon(epsilon0=EPSILON0, num_users=n, delta=DELTA),
            "fmt_paper": paper_epsilon(epsilon0=EPSILON0, num_users=n, delta=DELTA),
            "fmt_post": post_epsilon(epsilon0=EPSILON0, num_users=n, delta=DELTA),
            "exact_pair": exact_pair_epsilon(p0, p1, DELTA),
            "certified_oracle": oracle,
            "certified": result.lower_bound.epsilon,
            "audit": result.to_dict(),
        })
    figure = Figure(figsize=(8.5, 5.6), layout="constrained")
    ax = figure.subplots()
    x = [r["num_users"] for r in rows]
    ax.axhline(EPSILON0, color="gray", linestyle=":", label="ε0 (local, no amplification)")
    ax.plot(x, [r["fmt_post"] for r in rows], "^:", color="#8c564b",
            label="FMT bound, eq. (1) of Canonne's post: log(1 + 16 tanh(ε0/2) √(e^ε0 log(4/δ)/n))")
    ax.plot(x, [r["fmt"] for r in rows], "s--", color="#1f77b4",
            label="FMT bound, closed form of the authors' code (the claim audited)")
    ax.plot(x, [r["fmt_paper"] for r in rows], "v-.", color="#17becf",
            label="FMT bound, Thm 3.1 as in the paper")
    ax.plot(x, [r["exact_pair"] for r in rows], "-", color="black", label="exact ε(δ) of the audited pair")
    ax.plot(x, [r["certified_oracle"] for r in rows], "o", color="#d62728", label="certified, oracle tests (95%)")
    ax.plot(x, [r["certified"] for r in rows], "x", color="#9467bd", label="certified, generic audit (95%)")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=0.01)
    ax.set_ylim(0.0, 1.5 * EPSILON0)
    ax.set_xlabel("number of users n")
    ax.set_ylabel(f"ε at δ = {DELTA:g}")
    ax.set_title(f"shuffled {K}-ary randomized response, ε0 = {EPSILON0:g}, {trials:,} trials", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    data = {"epsilon0": EPSILON0, "k": K, "delta": DELTA, "ns": list(ns), "trials": trials, "seed": seed,
            "confidence": 0.95, "rows": rows}
    return save(out_dir, NAME, figure, data)
