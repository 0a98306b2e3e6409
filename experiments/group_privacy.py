"""`group-privacy`: audits of datasets k records apart against the group-privacy bound kε.

An ε-DP mechanism is kε-DP for datasets that differ in k records (Dwork &
Roth 2014, Thm 2.2). Both mechanisms here attain it: the Laplace mechanism on
a sum of records in {0, 1} (k records of 0 against k records of 1 move the
sum by k; noise on a 2^−20 grid, `grid_laplace`, so that no floating-point
leak adds to the privacy loss) and
randomized response on each record (k reports, each flipped). Audits at
δ = 0 get close to kε while the event that carries the worst-case loss is
common enough to be seen: for Laplace it has probability about e^−kε/2 under
D0, for randomized response (1 + e^ε)^−k; once that is rarer than 1/trials
the certified fraction of kε falls.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.experiments.grid_laplace import grid_laplace
from dpaudit.experiments.output import save
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.neighbours import categories_in, records_in
from dpaudit.mechanisms.randomized_response import randomized_response

__all__ = ["NAME", "run"]

NAME = "group-privacy"
EPSILON = 0.5
KS_FULL = (1, 2, 4, 6, 8, 10, 12)
KS_QUICK = (1, 2, 4)


def _grid_laplace_sum(*, epsilon: float) -> Mechanism:
    """Return sum(data) + Laplace(1/ε) noise on a 2^−20 grid: ε-DP for records in {0, 1} (add/remove)."""
    from dp_accounting import dp_event

    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return float(np.sum(data)) + grid_laplace(1.0 / epsilon, size, rng)

    return Mechanism(
        name="laplace", sampler=sample, claim=Claim(epsilon, 0.0), event=dp_event.LaplaceDpEvent(1.0 / epsilon),
        neighbours=records_in(0, 1), params={"epsilon": epsilon}, buggy=False,
    )


def _group_pair(base: Mechanism, k: int) -> tuple[Mechanism, np.ndarray, np.ndarray]:
    """Return `base` opened to datasets k records apart (claim kε, `GroupDpEvent`) and such a pair: k zeros vs k ones."""
    from dpaudit.mechanisms.events import GroupDpEvent

    neighbours = records_in(0, 1, max_changed=k) if base.name == "laplace" else categories_in(2, max_changed=k)
    d0 = np.zeros(k, dtype=int)
    mech = dataclasses.replace(
        base,
        name=f"{base.name} (group of {k})",
        claim=Claim(k * base.claim.epsilon, 0.0, base.claim.relation),
        event=GroupDpEvent(base.event, k),
        neighbours=neighbours,
        params={**base.params, "group_size": k},
    )
    return mech, d0, np.ones_like(d0)


def run(out_dir: Path, *, quick: bool = False, seed: int = 0) -> dict[str, Any]:
    """Audit k-apart pairs of Laplace and randomized response; write group-privacy.png/json; return the JSON content."""
    from matplotlib.figure import Figure

    ks = KS_QUICK if quick else KS_FULL
    trials = 100_000 if quick else 2_000_000
    rows = []
    for k in ks:
        row: dict[str, Any] = {"k": k, "group_bound": k * EPSILON}
        for key, base in (("laplace", _grid_laplace_sum(epsilon=EPSILON)), ("randomized_response", randomized_response(epsilon=EPSILON))):
            mech, d0, d1 = _group_pair(base, k)
            result = audit_mechanism(mech, d0, d1, trials=trials, seed=seed)
            row[key] = {"certified": result.lower_bound.epsilon, "upper_bound": result.upper_bound.to_dict(),
                        "audit": result.to_dict()}
        row["worst_event_probability"] = {"laplace": math.exp(-k * EPSILON) / 2.0,
                                          "randomized_response": (1.0 + math.exp(EPSILON)) ** -k}
        rows.append(row)
    figure = Figure(figsize=(11.5, 4.6), layout="constrained")
    left, right = figure.subplots(1, 2)
    x = [r["k"] for r in rows]
    left.plot(x, [r["group_bound"] for r in rows], "-", color="black", label="group privacy: kε")
    left.plot(x, [r["laplace"]["certified"] for r in rows], "o", color="#d62728", label="certified, Laplace on a sum")
    left.plot(x, [r["randomized_response"]["certified"] for r in rows], "s", color="#1f77b4", mfc="none",
              label="certified, randomized response per record")
    left.set_xlabel("k (records changed)")
    left.set_ylabel("ε")
    left.set_title(f"datasets k apart, ε = {EPSILON:g}, {trials:,} trials per dataset, 95%", fontsize=10)
    left.legend(fontsize=8)
    left.grid(True, alpha=0.3)
    right.plot(x, [r["laplace"]["certified"] / r["group_bound"] for r in rows], "o-", color="#d62728", label="Laplace")
    right.plot(x, [r["randomized_response"]["certified"] / r["group_bound"] for r in rows], "s-", color="#1f77b4",
               mfc="none", label="randomized response")
    right.set_ylim(0, 1.05)
    right.set_xlabel("k")
    right.set_ylabel("certified / kε")
    right.set_title("fraction of kε certified: it falls once the worst-case event is rarer than 1/trials",
                    fontsize=9)
    right.legend(fontsize=8, loc="lower left")
    right.grid(True, alpha=0.3)
    data = {"epsilon": EPSILON, "ks": list(ks), "trials": trials, "seed": seed, "confidence": 0.95, "rows": rows}
    return save(out_dir, NAME, figure, data)
