"""`amplification-sampling`: privacy amplification by Poisson subsampling, audited.

A 1-DP randomized response is run on a Poisson q-subsample: it reports (with
ε = 1 randomized response) whether the target record was sampled. Removing
the record (add/remove neighbours) turns the output distribution from
q·RR(1) + (1 − q)·RR(0) into RR(0), whose likelihood ratio is exactly
1 + q(e − 1): this pair attains the tight bound log(1 + q(e^ε − 1)) (Li,
Qardaji, Su, ASIACCS 2012; Balle, Barthe, Gaboardi, NeurIPS 2018, Thm 8).
The certified lower bounds are set against it and against Smith's 2qε
("Differential privacy and the secrecy of the sample", 2009), which is
looser. Two audits per q: the generic one (`audit_mechanism`, which chooses
its test on 20% of the samples, as the outputs are discrete) and the oracle
test S = {output = 1}, fixed in advance, which spends every sample on
estimation.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.theory.amplification import poisson_subsampled, smith_subsampled
from dpaudit.experiments.output import save
from dpaudit.experiments.threshold_tests import certified_epsilon, threshold_boxes
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.neighbours import categories_in

__all__ = ["NAME", "run", "subsampled_rr"]

NAME = "amplification-sampling"
EPSILON = 1.0
QS_FULL = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
QS_QUICK = (0.1, 0.25, 0.5, 1.0)
PAIR = (np.array([0]), np.array([1]))


def subsampled_rr(*, epsilon: float, q: float) -> Mechanism:
    """Return ε-randomized response of "the target record was Poisson-sampled" (d = [1] present, [0] absent).

    The record is included with probability q; the inner mechanism is ε-DP
    for adding or removing it, so the whole is log(1 + q(e^ε − 1))-DP, tightly.
    """
    from dp_accounting import dp_event

    keep = 1.0 / (1.0 + math.exp(-epsilon))

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        sampled = (int(data[0]) == 1) & (rng.random(size) < q)
        return np.where(rng.random(size) < keep, sampled, ~sampled).astype(int)

    inner = dp_event.RandomizedResponseDpEvent(noise_parameter=2.0 / (math.exp(epsilon) + 1.0), num_buckets=2)
    return Mechanism(
        name=f"poisson-subsampled randomized response (q = {q:g})",
        sampler=sample,
        claim=Claim(poisson_subsampled(epsilon=epsilon, q=q)[0], 0.0, Relation.ADD_REMOVE),
        event=dp_event.PoissonSampledDpEvent(q, inner),
        default_pair=PAIR,
        neighbours=categories_in(2),
        params={"epsilon": epsilon, "q": q},
    )


def _oracle_certified(mech: Mechanism, trials: int, rng: np.random.Generator) -> float:
    """Return the certified ε (95%) of the fixed test S = {output = 1} on `trials` outputs per dataset."""
    out0, out1 = mech.sample(PAIR[0], trials, rng), mech.sample(PAIR[1], trials, rng)
    return certified_epsilon(threshold_boxes(out0, out1, [1.0], beta=0.05), 0.0)


def run(out_dir: Path, *, quick: bool = False, seed: int = 0) -> dict[str, Any]:
    """Audit the subsampled mechanism at each q; write amplification-sampling.png/json; return the JSON content."""
    from matplotlib.figure import Figure

    qs = QS_QUICK if quick else QS_FULL
    trials = 200_000 if quick else 4_000_000
    rng = np.random.default_rng(seed)
    rows = []
    for q in qs:
        mech = subsampled_rr(epsilon=EPSILON, q=q)
        result = audit_mechanism(mech, trials=trials, seed=seed)
        rows.append({
            "q": q,
            "certified": result.lower_bound.epsilon,
            "certified_oracle": _oracle_certified(mech, trials, rng),
            "tight": poisson_subsampled(epsilon=EPSILON, q=q)[0],
            "smith": smith_subsampled(epsilon=EPSILON, q=q),
            "upper_bound": result.upper_bound.to_dict(),
            "audit": result.to_dict(),
        })
    figure = Figure(figsize=(11, 4.6), layout="constrained")
    left, right = figure.subplots(1, 2)
    grid = np.geomspace(min(qs), 1.0, 200)
    left.plot(grid, 2 * grid * EPSILON, "--", label="Smith: 2qε")
    left.plot(grid, np.log1p(grid * math.expm1(EPSILON)), "-", color="black", label="tight: log(1 + q(e^ε − 1))")
    left.axhline(EPSILON, linestyle=":", color="gray", label="no amplification: ε")
    left.plot([r["q"] for r in rows], [r["certified_oracle"] for r in rows], "o", color="#d62728",
              label=f"certified, oracle test ({trials:,} trials, 95%)")
    positive = [r for r in rows if r["certified"] > 0]
    left.plot([r["q"] for r in positive], [r["certified"] for r in positive], "x", color="#9467bd",
              label="certified, generic audit (where > 0)")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("sampling rate q")
    left.set_ylabel("ε")
    left.set_title(f"Poisson-subsampled {EPSILON:g}-DP randomized response", fontsize=10)
    left.legend(fontsize=8)
    left.grid(True, which="both", alpha=0.3)
    right.plot([r["q"] for r in rows], [r["certified_oracle"] / r["tight"] for r in rows], "o-", color="#d62728",
               label="oracle certified / tight bound")
    right.plot([r["q"] for r in rows], [r["certified"] / r["tight"] for r in rows], "x:", color="#9467bd",
               label="generic certified / tight bound")
    right.plot([r["q"] for r in rows], [r["certified_oracle"] / r["smith"] for r in rows], "s--", color="#1f77b4",
               label="oracle certified / 2qε")
    right.axhline(1.0, color="black", linewidth=0.8)
    right.set_xscale("log")
    right.set_ylim(0, 1.1)
    right.set_xlabel("sampling rate q")
    right.set_ylabel("ratio")
    right.set_title("how much of each bound the audit certifies", fontsize=10)
    right.legend(fontsize=8, loc="lower right")
    right.grid(True, which="both", alpha=0.3)
    data = {"epsilon": EPSILON, "qs": list(qs), "trials": trials, "seed": seed, "confidence": 0.95, "rows": rows}
    return save(out_dir, NAME, figure, data)
