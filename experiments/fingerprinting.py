"""`fingerprinting`: tracing attacks on one-way marginals, and the Steinke–Ullman scales they meet.

Steinke & Ullman ("Between Pure and Approximate Differential Privacy", arXiv
1501.06095) show that an (ε, δ)-DP release of d one-way marginals of n rows
with ℓ∞ error α needs n ≳ √(d log(1/δ))/(εα); the attack behind it is
tracing (Dwork, Smith, Steinke, Ullman, Vadhan, FOCS 2015). Four parts:

1. exact release: the true-positive rate at 1% false positives of tracing
   with known biases and with biases estimated from r reference rows, r from
   n down to 1;
2. noise of a fixed scale α per coordinate (no privacy claimed): tracing's
   true-positive rate and the certified ε of a one-run tracing audit as n
   grows past the √d/α scale (the √(d log(1/δ))/(εα) scale at ε = 1 marked);
3. the DP marginal mechanisms at ε ∈ {0.5, 1, 2, 4}: the ε certified by
   tracing (multi-run, threshold estimator) against the claim — how tight a
   black-box audit with no pair search gets;
4. the ℓ∞ error of Laplace noise per coordinate (scale b = 2d/(nε)) against
   the ℓ∞-ball mechanism (their §3) as d grows, beside the expected values:
   Laplace's ℓ∞ error is the largest of d independent Exp(b) draws, of mean
   b·H_d = (2d/(nε))·H_d with H_d = 1 + 1/2 + … + 1/d the harmonic number;
   the ball's noise is R·max_j|U_j| with R ~ Gamma(d + 1, 2/(nε)) and U
   uniform on [−1, 1]^d independent of R, of mean (d + 1)(2/(nε))·d/(d + 1)
   = 2d/(nε). The ratio of the means is H_d = ln d + 0.577… + O(1/d), not ln d.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from dpaudit.attacks.games import MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.tracing import audit_tracing
from dpaudit.audit.estimators.certify import Bound
from dpaudit.experiments.output import save
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.builtins.marginals import marginal_release, marginals_gaussian, marginals_laplace, marginals_linf
from dpaudit.mechanisms.builtins.marginals_buggy import marginals_exact

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["NAME", "accuracy_sweep", "dp_mechanisms", "exact_release", "expected_linf_errors", "harmonic", "linf_errors", "run"]

NAME = "fingerprinting"
DELTA = 1e-5
SWEEP_SCORES = 2000
EPSILONS = (0.5, 1.0, 2.0, 4.0)
FULL = {"exact_dim": 5000, "exact_runs": 1000, "references": (1, 3, 10, 30, 100), "noise_dim": 1000, "alpha": 0.05,
        "ns": (50, 100, 200, 400, 800, 1600, 3200, 6400), "dp_rows": 100, "dp_dims": (1, 10), "dp_runs": 20_000, "dp_seeds": 5,
        "dims": (10, 100, 1_000, 10_000, 100_000), "error_rows": 100, "error_draws": 20}
QUICK = {"exact_dim": 1000, "exact_runs": 200, "references": (1, 10, 100), "noise_dim": 200, "alpha": 0.1,
         "ns": (100, 400, 1600), "dp_rows": 100, "dp_dims": (1, 10), "dp_runs": 2_000, "dp_seeds": 2,
         "dims": (10, 100, 1_000), "error_rows": 100, "error_draws": 5}
DP_MECHANISMS = {"marginals_laplace": marginals_laplace, "marginals_gaussian": marginals_gaussian,
                 "marginals_linf": marginals_linf}


def _noise_only(alpha: float, n: int, d: int) -> Mechanism:
    """Return column means + N(0, α²) per coordinate: accuracy α without a privacy proof (nominal claim ε = 1)."""
    from dp_accounting import dp_event

    def noise(size: int, rng: np.random.Generator) -> np.ndarray:
        return rng.normal(0.0, alpha, (size, d))

    return marginal_release("noisy_marginals", 1.0, DELTA, n, d, noise, dp_event.UnsupportedDpEvent(),
                            {"alpha": alpha}, "Marginals with noise of scale α (no privacy claimed).")


def exact_release(cfg: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """Return the true-positive rate at 1% FPR on an exact release (n = 100) with known biases and r reference rows."""
    mech = marginals_exact(num_rows=100, dim=cfg["exact_dim"])
    settings = [("known", None)] + [("reference", r) for r in cfg["references"]]
    rows = []
    for score, r in settings:
        result = audit_tracing(mech, game=MultiRun(cfg["exact_runs"]), fresh_data=True, scorer=score, reference_rows=r,
                               seed=seed)
        rows.append({"score": score, "reference_rows": r, "tpr_at_1pct_fpr": result.attack["tpr_at_1pct_fpr"],
                     "certified": result.lower_bound.epsilon})
    return rows


def accuracy_sweep(cfg: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """Return tracing's TPR at 1% FPR and the one-run certified ε (δ = 1e-5) as n grows, noise N(0, α²).

    The TPR pools the scores of ⌈SWEEP_SCORES/n⌉ releases (seeds seed, seed + 1, …),
    so small n still has enough non-members for a 1% quantile; the certified ε
    is the one-run audit of the first release alone.
    """
    d, alpha = cfg["noise_dim"], cfg["alpha"]
    rows = []
    for n in cfg["ns"]:
        releases = max(1, math.ceil(SWEEP_SCORES / n))
        results = [audit_tracing(_noise_only(alpha, n, d), game=OneRun(None), bound=Bound(delta=DELTA), seed=seed + i)
                   for i in range(releases)]
        pooled = Observations(scores=np.concatenate([r.observations.scores for r in results]),
                              truth=np.concatenate([r.observations.truth for r in results]))
        rows.append({"rows": n, "releases": releases, "tpr_at_1pct_fpr": pooled.tpr_at(0.01),
                     "certified": results[0].lower_bound.epsilon})
    return rows


def dp_mechanisms(cfg: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """Return, per DP marginal mechanism, d and claimed ε, the ε certified by multi-run tracing audits.

    Each setting is audited with seeds seed, seed + 1, …: every bound is sound
    on its own; their mean (`certified`) shows the typical tightness, which
    depends on the data drawn (when the fresh row equals the member on every
    column, the two datasets coincide and nothing can be certified).
    """
    rows = []
    for name, factory in DP_MECHANISMS.items():
        for d in cfg["dp_dims"]:
            for eps in EPSILONS:
                mech = factory(epsilon=eps, num_rows=cfg["dp_rows"], dim=d)
                bounds = [audit_tracing(mech, game=MultiRun(cfg["dp_runs"]), seed=seed + i).lower_bound.epsilon
                          for i in range(cfg["dp_seeds"])]
                rows.append({"mechanism": name, "dim": d, "claim": eps, "delta": mech.claim.delta,
                             "certified": float(np.mean(bounds)), "certified_per_seed": bounds})
    return rows


def harmonic(d: int) -> float:
    """Return H_d = 1 + 1/2 + … + 1/d, summed from the smallest term up."""
    return float(np.sum(1.0 / np.arange(d, 0, -1, dtype=float)))


def expected_linf_errors(d: int, n: int, epsilon: float) -> dict[str, float]:
    """Return the expected ℓ∞ errors (2d/(nε))·H_d of Laplace per coordinate and 2d/(nε) of the ℓ∞-ball mechanism."""
    scale = 2.0 * d / (n * epsilon)
    return {"laplace": scale * harmonic(d), "linf_ball": scale}


def linf_errors(cfg: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """Return the mean ℓ∞ error of Laplace per coordinate and of the ℓ∞-ball mechanism (ε = 1) as d grows.

    Each row also holds the expected values (`expected_linf_errors`) and
    their ratio H_d (`harmonic_d`).
    """
    rng = np.random.default_rng(seed)
    n, draws = cfg["error_rows"], cfg["error_draws"]
    rows = []
    for d in cfg["dims"]:
        data = np.ones((n, d), dtype=np.int8)
        errors = {}
        for key, factory in (("laplace", marginals_laplace), ("linf_ball", marginals_linf)):
            release = factory(epsilon=1.0, num_rows=n, dim=d).sample(data, draws, rng)
            errors[key] = float(np.mean(np.max(np.abs(release - 1.0), axis=1)))
        expected = expected_linf_errors(d, n, 1.0)
        rows.append({"dim": d, **errors, "ratio": errors["laplace"] / errors["linf_ball"],
                     "expected_laplace": expected["laplace"], "expected_linf_ball": expected["linf_ball"],
                     "harmonic_d": harmonic(d)})
    return rows


def _figure(exact: list, sweep: list, dp: list, errors: list, cfg: dict[str, Any]) -> Figure:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(15, 8.5), layout="constrained")
    (a, b, c), (e, f, g) = figure.subplots(2, 3)
    labels = ["known p" if r["score"] == "known" else f"r = {r['reference_rows']}" for r in exact]
    a.bar(labels, [r["tpr_at_1pct_fpr"] for r in exact], color="#3182bd")
    a.set_ylim(0, 1.05)
    a.set_ylabel("TPR at 1% FPR")
    a.set_title(f"exact release, n = 100, d = {cfg['exact_dim']}: known biases vs r reference rows", fontsize=9)
    ns = [r["rows"] for r in sweep]
    scale = math.sqrt(cfg["noise_dim"]) / cfg["alpha"]
    lower = math.sqrt(cfg["noise_dim"] * math.log(1 / DELTA)) / cfg["alpha"]
    for ax, key, label in ((b, "tpr_at_1pct_fpr", "TPR at 1% FPR"), (c, "certified", "certified ε (one-run, 95%)")):
        ax.semilogx(ns, [r[key] for r in sweep], "o-", color="#d62728")
        ax.axvline(scale, color="gray", linestyle=":", label="√d/α")
        ax.axvline(lower, color="black", linestyle="--", label="√(d log(1/δ))/(εα), ε = 1")
        ax.set_xlabel("n (rows)")
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
        ax.set_title(f"noise N(0, α²), α = {cfg['alpha']:g}, d = {cfg['noise_dim']}", fontsize=9)
    for (name, marker), d in itertools.product(zip(DP_MECHANISMS, "os^"), cfg["dp_dims"]):
        pts = [r for r in dp if r["mechanism"] == name and r["dim"] == d]
        style = "-" if d == cfg["dp_dims"][0] else "--"
        e.plot([r["claim"] for r in pts], [r["certified"] for r in pts], marker + style, label=f"{name}, d = {d}")
    e.plot(EPSILONS, EPSILONS, ":", color="gray", label="claim")
    e.set_xlabel("claimed ε")
    e.set_ylabel(f"certified ε, mean of {cfg['dp_seeds']} seeds")
    e.set_title(f"DP marginals, n = {cfg['dp_rows']}, {cfg['dp_runs']:,} runs", fontsize=9)
    e.legend(fontsize=8)
    dims = [r["dim"] for r in errors]
    f.loglog(dims, [r["laplace"] for r in errors], "o", color="#1f77b4", label="Laplace per coordinate")
    f.loglog(dims, [r["expected_laplace"] for r in errors], "-", color="#1f77b4", label="expected: (2d/(nε))·H_d")
    f.loglog(dims, [r["linf_ball"] for r in errors], "s", color="#ff7f0e", label="ℓ∞-ball mechanism")
    f.loglog(dims, [r["expected_linf_ball"] for r in errors], "-", color="#ff7f0e", label="expected: 2d/(nε)")
    f.set_xlabel("d")
    f.set_ylabel("ℓ∞ error (ε = 1)")
    f.legend(fontsize=8)
    f.set_title(f"n = {cfg['error_rows']}, mean of {cfg['error_draws']} releases", fontsize=9)
    g.semilogx(dims, [r["ratio"] for r in errors], "o", label="measured ratio of mean errors")
    g.semilogx(dims, [r["harmonic_d"] for r in errors], "-", color="black", label="H_d = 1 + 1/2 + … + 1/d")
    g.set_xlabel("d")
    g.set_ylabel("Laplace error / ℓ∞-ball error")
    g.legend(fontsize=8)
    for ax in (a, b, c, e, f, g):
        ax.grid(True, alpha=0.3)
    return figure


def run(out_dir: Path, *, quick: bool = False, seed: int = 0) -> dict[str, Any]:
    """Run the four parts; write fingerprinting.png/json into `out_dir`; return the JSON content."""
    cfg = QUICK if quick else FULL
    exact, sweep = exact_release(cfg, seed), accuracy_sweep(cfg, seed)
    dp, errors = dp_mechanisms(cfg, seed), linf_errors(cfg, seed)
    data = {"seed": seed, "delta": DELTA, "confidence": 0.95, "config": cfg,
            "scale_sqrt_d_over_alpha": math.sqrt(cfg["noise_dim"]) / cfg["alpha"],
            "exact_release": exact, "accuracy_sweep": sweep, "dp_mechanisms": dp, "linf_errors": errors}
    return save(out_dir, NAME, _figure(exact, sweep, dp, errors, cfg), data)
