"""Score estimators side by side: mean certified ε over seeds, against the truth and the oracle (issue 16).

Every row is a law of attack scores: OUT scores from P0, IN scores from P1,
m of each, 20 seeds. For each estimator the mean bound over the seeds is
printed, with the true ε at δ where it is known and the oracle: the best
single threshold known in advance, its Clopper–Pearson bound (β/2 per rate)
computed from the exact rates at m scores per class. "pair" columns are the
default strategy (the dominating-pair test), "bands" the previous one. "peer" columns
re-implement the method of jax_privacy's auditing module (Clopper–Pearson
bounds with a Bonferroni correction over the thresholds on the ROC curve's
convex hull; for GDP over twice the hull's size; for one-run, guesses of IN
above each hull threshold), written here from its source, to compare on
identical score sets. "peer CP" takes both directions of the KOV bound, as
ours does (its `one_sided=False`); "peer CP 1s" is its default, TPR/FPR only. The one-run estimators
are given a one-run game drawn from the same laws: 2m canaries, each IN
with probability 1/2; "one-run" is the default (the joint test of the
rules where mδ is small), "1-run bonf" the same rules by weighted
Bonferroni ("—" where that is the default itself). GDP-based columns hold only for Gaussian trade-offs.
Then soundness counts: over many seeds, how often each estimator certifies
ε > 0 on null scores, or more than the truth on exactly tight scores.

Run: python benchmarks/score_estimators.py            (every law at m ∈ {10², 10³, 10⁴}: a quarter of an hour)
     python benchmarks/score_estimators.py --full     (m = 10⁵ too, the peer's one-run columns included,
                                                       and soundness over 1000 seeds of 2·10³ canaries:
                                                       about 100 minutes on 2 shared cores)
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Callable

import numpy as np
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.bands import local_levels
from dpaudit.audit.estimators.clopper_pearson import epsilon_from_rates, epsilon_lower_bound, rate_upper_bound
from dpaudit.audit.estimators.gdp import gdp_lower_bound, mu_lower_bound
from dpaudit.audit.estimators.one_run.binomial import one_run_epsilon, one_run_lower_bound, one_run_p_value
from dpaudit.audit.estimators.one_run.fdp import gdp_excess, one_run_fdp_lower_bound, one_run_fdp_mu
from dpaudit.audit.estimators.one_run.joint import joint_draws
from dpaudit.audit.estimators.one_run.rules import check_rules
from dpaudit.audit.estimators.thresholds import Bonferroni, SimultaneousBands, Split, threshold_lower_bound
from dpaudit.audit.theory.profiles import gdp_epsilon

DELTA = 1e-5
BETA = 0.05
SEEDS = 20


@dataclasses.dataclass(frozen=True)
class Law:
    """Scores of OUT (P0) and IN (P1), their exact rates at a threshold, and the true ε at δ if known."""

    name: str
    draw_out: Callable[[np.random.Generator, int], np.ndarray]
    draw_in: Callable[[np.random.Generator, int], np.ndarray]
    fpr: Callable[[np.ndarray], np.ndarray]  # P0(score ≥ t)
    fnr: Callable[[np.ndarray], np.ndarray]  # P1(score < t)
    thresholds: np.ndarray
    true_epsilon: float | None
    gaussian: bool = False


def gaussian(mu: float) -> Law:
    from scipy.stats import norm

    return Law(f"N(μ={mu:g})", lambda r, n: r.normal(size=n), lambda r, n: r.normal(mu, 1.0, n),
               norm.sf, lambda x: norm.cdf(x - mu), np.linspace(-6, mu + 6, 6001),
               gdp_epsilon(delta=DELTA, mu=mu), gaussian=True)


def laplace_law() -> Law:
    # Laplace(1) noise on 0 and 1: ε-DP with ε = 1, δ(ε') = 1 − e^{(ε'−1)/2}.
    from scipy.stats import laplace

    return Law("Laplace(ε=1)", lambda r, n: r.laplace(size=n), lambda r, n: r.laplace(1.0, 1.0, n),
               laplace.sf, lambda x: laplace.cdf(x - 1.0), np.linspace(-8, 9, 6001),
               1.0 + 2.0 * np.log1p(-DELTA))


def integer_law() -> Law:
    from scipy.stats import binom

    p0, p1 = binom.pmf(np.arange(11), 10, 0.35), binom.pmf(np.arange(11), 10, 0.65)
    return Law("Binomial ties", lambda r, n: r.binomial(10, 0.35, n).astype(float),
               lambda r, n: r.binomial(10, 0.65, n).astype(float),
               lambda x: binom.sf(np.ceil(x) - 1, 10, 0.35), lambda x: binom.cdf(np.ceil(x) - 1, 10, 0.65),
               np.arange(-0.5, 11.0), numeric_epsilon(p0, p1))


def student_law() -> Law:
    from scipy.stats import t

    grid = np.linspace(-400.0, 400.0, 1_600_001)
    dx = grid[1] - grid[0]
    return Law("Student t₂", lambda r, n: r.standard_t(2, n), lambda r, n: r.standard_t(2, n) + 1.0,
               lambda x: t.sf(x, 2), lambda x: t.cdf(x - 1.0, 2), np.linspace(-30, 31, 6001),
               numeric_epsilon(t.pdf(grid, 2) * dx, t.pdf(grid - 1.0, 2) * dx))


def cauchy_law() -> Law:
    """Standard Cauchy scores, IN shifted by 2: a bounded privacy loss (at most 2·asinh(1) ≈ 1.76) spread over the bulk."""
    from scipy.stats import cauchy

    grid = np.linspace(-20_000.0, 20_000.0, 4_000_001)
    dx = grid[1] - grid[0]
    return Law("Cauchy +2", lambda r, n: r.standard_cauchy(n), lambda r, n: r.standard_cauchy(n) + 2.0,
               cauchy.sf, lambda x: cauchy.cdf(x - 2.0), np.linspace(-60, 62, 6001),
               numeric_epsilon(cauchy.pdf(grid) * dx, cauchy.pdf(grid - 2.0) * dx))


def leak_law() -> Law:
    """IN: 99% N(0, 1), 1% N(6, 1): a leak confined to the top 1% of IN scores."""
    from scipy.stats import norm

    grid = np.linspace(-12.0, 20.0, 640_001)
    dx = grid[1] - grid[0]
    p1 = (0.99 * norm.pdf(grid) + 0.01 * norm.pdf(grid - 6.0)) * dx

    def draw_in(r: np.random.Generator, n: int) -> np.ndarray:
        return r.normal(size=n) + 6.0 * (r.random(n) < 0.01)

    return Law("top-1% leak", lambda r, n: r.normal(size=n), draw_in, norm.sf,
               lambda x: 0.99 * norm.cdf(x) + 0.01 * norm.cdf(x - 6.0), np.linspace(-6, 12, 6001),
               numeric_epsilon(norm.pdf(grid) * dx, p1))


def numeric_epsilon(p0: np.ndarray, p1: np.ndarray) -> float:
    """Return the smallest ε with max over both directions of Σ max(0, p_a − e^ε p_b) ≤ δ (hockey-stick divergence)."""
    from scipy.optimize import brentq

    def excess(eps: float) -> float:
        return max(np.sum(np.maximum(p1 - np.exp(eps) * p0, 0.0)),
                   np.sum(np.maximum(p0 - np.exp(eps) * p1, 0.0))) - DELTA

    if excess(0.0) <= 0.0:
        return 0.0
    high = 1.0
    while excess(high) > 0.0:
        high *= 2.0
    return float(brentq(excess, 0.0, high, xtol=1e-6))


def oracle(law: Law, m: int) -> tuple[float, float]:
    """Return the best fixed threshold's (ε, GDP ε) from the exact rates at m scores per class."""
    fpr, fnr = law.fpr(law.thresholds), law.fnr(law.thresholds)
    eps = float(np.max(epsilon_lower_bound(fpr * m, m, fnr * m, m, delta=DELTA, beta=BETA)))
    mu = float(np.max(mu_lower_bound(fpr * m, m, fnr * m, m, beta=BETA)))
    return eps, gdp_epsilon(delta=DELTA, mu=mu)


def _hull(obs: Observations) -> tuple[np.ndarray, np.ndarray]:
    """Return (fn, fp) counts of the thresholds on the ROC curve's upper convex hull."""
    thresholds = np.append(np.unique(obs.scores), np.inf)
    fn = np.searchsorted(np.sort(obs.in_scores), thresholds, side="left").astype(float)
    tn = np.searchsorted(np.sort(obs.out_scores), thresholds, side="left").astype(float)
    keep = np.arange(thresholds.size)
    while keep.size > 2:
        step = np.diff(np.stack([fn[keep], tn[keep]], axis=1), axis=0)
        dominated = step[:-1, 1] * step[1:, 0] - step[1:, 1] * step[:-1, 0] <= 0
        if not dominated.any():
            break
        keep = keep[np.r_[True, ~dominated, True]]
    return fn[keep], obs.n_out - tn[keep]


def peer_cp(obs: Observations, seed: int, one_sided: bool = False) -> float:
    """The peer's Clopper–Pearson bound: both directions (its `one_sided=False`), or TPR/FPR only (its default)."""
    fn, fp = _hull(obs)
    each = BETA / fn.size / 2
    fpr, fnr = rate_upper_bound(fp, obs.n_out, each), rate_upper_bound(fn, obs.n_in, each)
    if one_sided:
        with np.errstate(divide="ignore"):
            return float(max(0.0, np.max(np.log(np.maximum(1.0 - fnr - DELTA, 0.0) / fpr))))
    return float(np.max(epsilon_from_rates(fpr, fnr, DELTA)))


def peer_one_run(obs: Observations, seed: int, fdp: bool = False) -> float:
    """The peer's one-run bounds: guess IN above each hull threshold (k− = 0), Bonferroni over the hull.

    A threshold that does not reject the best bound so far cannot raise it and
    is skipped before the root search: the same maximum, found faster.
    """
    fn, fp = _hull(obs)
    tp = obs.n_in - fn
    each, best = BETA / fn.size, 0.0
    for correct, guesses in zip(tp.astype(int), (tp + fp).astype(int)):
        if guesses == 0 or correct / guesses <= 0.5:
            continue
        game = dict(canaries=obs.size, guesses=guesses, correct=correct)
        if fdp:
            if best > 0.0 and gdp_excess(mu=best, beta=each, **game) <= 0.0:
                continue
            best = max(best, one_run_fdp_mu(beta=each, **game))
        else:
            if best > 0.0 and one_run_p_value(epsilon=best, delta=DELTA, **game) > each:
                continue
            best = max(best, one_run_epsilon(delta=DELTA, beta=each, **game))
    return gdp_epsilon(delta=DELTA, mu=best) if fdp else best


def peer_gdp(obs: Observations, seed: int) -> float:
    from scipy.stats import norm

    fn, fp = _hull(obs)
    each = BETA / (2 * fn.size)
    fpr, fnr = rate_upper_bound(fp, obs.n_out, each), rate_upper_bound(fn, obs.n_in, each)
    usable = np.maximum(fpr, fnr) < 1.0 - DELTA
    if not usable.any():
        return 0.0
    mu = float(np.max(norm.isf(fpr[usable]) - norm.ppf(fnr[usable])))
    return gdp_epsilon(delta=DELTA, mu=mu)


MULTI_RUN: dict[str, Callable[[Observations, int], float]] = {
    "pair": lambda o, s: threshold_lower_bound(o, delta=DELTA, rng=s).epsilon,
    "bands": lambda o, s: threshold_lower_bound(o, delta=DELTA, strategy=SimultaneousBands(), rng=s).epsilon,
    "split": lambda o, s: threshold_lower_bound(o, delta=DELTA, strategy=Split(), rng=s).epsilon,
    "bonf(20)": lambda o, s: threshold_lower_bound(o, delta=DELTA, strategy=Bonferroni(), rng=s).epsilon,
    "peer CP": peer_cp,
    "peer CP 1s": lambda o, s: peer_cp(o, s, one_sided=True),
    "GDP pair": lambda o, s: gdp_lower_bound(o, delta=DELTA, rng=s).epsilon,
    "GDP bands": lambda o, s: gdp_lower_bound(o, delta=DELTA, strategy=SimultaneousBands(), rng=s).epsilon,
    "GDP split": lambda o, s: gdp_lower_bound(o, delta=DELTA, strategy=Split(), rng=s).epsilon,
    "peer GDP": peer_gdp,
}
ONE_RUN: dict[str, Callable[[Observations, int], float]] = {
    "one-run": lambda o, s: one_run_lower_bound(o, delta=DELTA, rng=s).epsilon,
    "1-run bonf": lambda o, s: one_run_lower_bound(o, delta=DELTA, calibration="bonferroni", rng=s).epsilon,
    "peer 1-run": peer_one_run,
    "1-run f-DP": lambda o, s: one_run_fdp_lower_bound(o, delta=DELTA, rng=s).epsilon,
    "peer f-DP": lambda o, s: peer_one_run(o, s, fdp=True),
}


def draw(law: Law, m: int, seed: int) -> tuple[Observations, Observations]:
    """Return (m IN and m OUT scores, a one-run game of 2m canaries each IN w.p. 1/2) for one seed."""
    rng = np.random.default_rng(seed)
    multi = Observations.from_in_out(law.draw_in(rng, m), law.draw_out(rng, m))
    truth = rng.random(2 * m) < 0.5
    scores = np.where(truth, law.draw_in(rng, 2 * m), law.draw_out(rng, 2 * m))
    return multi, Observations(scores=scores, truth=truth)


def row(law: Law, m: int) -> tuple[list[str], dict[str, float]]:
    """Return one table row (means over SEEDS; "—" where skipped) and the seconds per call of each estimator."""
    joint = joint_draws(check_rules(None, None, 2 * m, "benchmark"), canaries=2 * m, delta=DELTA, beta=BETA)
    skip = {"1-run bonf"} if joint is None else set()
    sums = dict.fromkeys([*MULTI_RUN, *ONE_RUN], 0.0)
    seconds = dict.fromkeys(sums, 0.0)
    for seed in range(SEEDS):
        multi, one_run = draw(law, m, seed)
        for table, obs in ((MULTI_RUN, multi), (ONE_RUN, one_run)):
            for name, estimate in table.items():
                if name in skip:
                    continue
                start = time.perf_counter()
                sums[name] += estimate(obs, seed)
                seconds[name] += time.perf_counter() - start
    eps_oracle, gdp_oracle = oracle(law, m)
    truth = "" if law.true_epsilon is None else f"{law.true_epsilon:.2f}"
    cells = [law.name, f"{m:,}", truth, f"{eps_oracle:.3f}", f"{gdp_oracle:.2f}"]
    cells += ["—" if name in skip else f"{sums[name] / SEEDS:.3f}" for name in sums]
    return cells, {name: s / SEEDS for name, s in seconds.items()}


def grid(full: bool) -> list[tuple[Law, int]]:
    """Return the (law, m) rows: every law at m = 10², 10³, 10⁴, and 10⁵ too with `full`."""
    sizes = (100, 1_000, 10_000, 100_000) if full else (100, 1_000, 10_000)
    laws = [gaussian(mu) for mu in (0.5, 1.0, 2.0, 4.0)]
    laws += [laplace_law(), integer_law(), student_law(), cauchy_law(), leak_law(), gaussian(0.0)]
    return [(law, m) for law in laws for m in sizes]


def print_table(rows: list[list[str]], header: list[str]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(cell.rjust(w) for cell, w in zip(r, widths)))


def multiplicity(sizes: tuple[int, ...]) -> None:
    """Print what each correction pays per threshold, as a Bonferroni count: β/2 ÷ the level of one rate's bound.

    The band's local levels are fixed by m; the peer's count is the ROC hull's
    size, which the data choose (mean over the seeds of the N(μ=1) sets).
    """
    print("\nPrice of choosing the threshold, as a Bonferroni count (β/2 ÷ the level of one rate's bound):")
    rows = []
    for m in sizes:
        ranks, levels = local_levels(m, BETA / 2)
        middle = levels[np.searchsorted(ranks, m // 2)]
        hull = np.mean([_hull(draw(gaussian(1.0), m, seed)[0])[0].size for seed in range(SEEDS)])
        rows.append([f"{m:,}", f"{BETA / 2 / levels[0]:.1f}", f"{BETA / 2 / middle:.1f}", f"{hull:.1f}"])
    print_table(rows, ["m", "bands: rank 1", "bands: middle rank", "peer: hull size, N(μ=1)"])


def soundness(seeds: int, m: int) -> None:
    """Print, per estimator, how many seeds certify ε > 0 on null scores and more than the truth on tight ones.

    Tight scores: Laplace(1) noise plus the truth (ε = 1 exactly); for the GDP
    columns Gaussian noise plus the truth (μ = 1, ε of 1-GDP at δ).
    """
    from scipy.stats import binom

    allowed = int(binom.isf(1e-4, seeds, BETA))
    print(f"\nSoundness over {seeds} seeds, 2·{m:,} canaries (each IN w.p. 1/2), 95% confidence: "
          f"a sound estimator exceeds {allowed} with probability ≤ 1e-4.")
    header = ["estimator", "null: ε > 0", "null with ties: ε > 0", "tight: bound > truth"]
    rows = []
    for name, estimate in {**MULTI_RUN, **ONE_RUN}.items():
        gdp = "GDP" in name or "f-DP" in name
        counts = [0, 0, 0]
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            truth = rng.random(2 * m) < 0.5
            counts[0] += estimate(Observations(scores=rng.normal(size=2 * m), truth=truth), seed) > 0.0
            ties = rng.integers(0, 4, 2 * m).astype(float)
            counts[1] += estimate(Observations(scores=ties, truth=truth), seed) > 0.0
            noise = rng.normal(size=2 * m) if gdp else rng.laplace(size=2 * m)
            tight = gdp_epsilon(delta=DELTA, mu=1.0) if gdp else 1.0
            counts[2] += estimate(Observations(scores=noise + truth, truth=truth), seed) > tight + 1e-9
        rows.append([name, *(str(c) for c in counts)])
    print_table(rows, header)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="add m = 10⁵ and 1000 soundness seeds at 2·10³ canaries")
    parser.add_argument("--soundness-seeds", type=int, default=None,
                        help="seeds of the soundness counts (default 200, 1000 with --full)")
    args = parser.parse_args()
    header = ["scores", "m", "true ε", "oracle", "GDP or.", *MULTI_RUN, *ONE_RUN]
    rows, times = [], []
    for law, m in grid(args.full):
        cells, seconds = row(law, m)
        rows.append(cells)
        times.append([law.name, f"{m:,}", *(f"{seconds[k] * 1e3:.1f}" if seconds[k] else "—" for k in seconds)])
        print(" ".join(cells), flush=True)
    print(f"\nMean certified ε over {SEEDS} seeds, δ = {DELTA:g}, 95% confidence, m IN and m OUT scores "
          "(one-run columns: 2m canaries, each IN w.p. 1/2). GDP columns assume a Gaussian trade-off.")
    print_table(rows, header)
    print("\nMilliseconds per call (mean over seeds; the first call at a new size includes calibrating its band):")
    print_table(times, ["scores", "m", *MULTI_RUN, *ONE_RUN])
    multiplicity((100, 1_000, 10_000, 100_000) if args.full else (100, 1_000, 10_000))
    seeds = args.soundness_seeds or (1000 if args.full else 200)
    soundness(seeds, 1_000 if args.full else 100)


if __name__ == "__main__":
    main()
