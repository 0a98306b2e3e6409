"""How well the selection split finds the best test of a discrete output: sparse vector, scored exactly.

Sparse vector with cut-off c = 1 has an (m + 1)-point output law, computed
exactly by `best_achievable.svt_first_above_law`. Each run draws a selection
sample from that law, lets `dpaudit.attacks.distinguish.select_test` choose a test,
and scores the chosen rejection set exactly: the bound it would typically
certify on the held-out trials (counts set to their expectations, pure-ε
ratio interval at 90%, its direction fixed on the selection sample as in an
audit). The best any test can do (`best_achievable.best_event_bound`) is
printed beside it. Rows compare the two ways `select_test` works on these
outputs and two selection shares of 10⁷ trials per dataset:

- "halves, all scorers": the categories not counted, as for outputs with
  many distinct values: every scorer is fitted on one half and judged on
  the other.
- "table on all outputs": the categories counted (at most
  `FEW_CATEGORIES`), as an audit does: the likelihood-ratio table alone,
  fitted and judged on the whole selection sample.

Run: `python benchmarks/discrete_selection.py [--seeds K]`.
"""

from __future__ import annotations

import argparse

import numpy as np
from best_achievable import SVT_SCALES, best_event_bound, svt_first_above_law
from dpaudit.attacks.distinguish import select_test
from dpaudit.attacks.selection_budget import discrete_level
from dpaudit.audit.estimators.projection import held_out_direction, projected_bound
from dpaudit.audit.estimators.rate_ratio import kov_ratio_bounds
from dpaudit.mechanisms.builtins.sparse_vector import cut_off
from dpaudit.mechanisms.registry import get_mechanism
from rich.console import Console
from rich.table import Table

TRIALS = 10_000_000
BETA = 0.1
CASES = (("sparse_vector", {"threshold": 0.5}), ("sparse_vector_dwork_roth", {}), ("sparse_vector_lee_clifton", {}))
SHARES = (0.1, 0.2)


def outcome_rows(m: int) -> np.ndarray:
    """Return the m + 1 possible outputs: the first ⊤ at query k (k = 1 … m), then no ⊤."""
    return cut_off(np.vstack([np.eye(m, dtype=bool), np.zeros((1, m), dtype=bool)]), 1)


def svt_laws(name: str, params: dict) -> tuple[np.ndarray, np.ndarray]:
    """Return the exact output laws on D0 and D1 of sparse vector `name` at ε = 0.1 on its default pair."""
    mech = get_mechanism(name, epsilon=0.1, **params)
    rho, nu = (s / mech.params["epsilon"] for s in SVT_SCALES[name])
    return tuple(svt_first_above_law(d, threshold=mech.params["threshold"], rho_scale=rho, nu_scale=nu)
                 for d in mech.default_pair)


def chosen_bound(p0: np.ndarray, p1: np.ndarray, *, selection: int, count: bool, seed: int) -> float:
    """Return the exact expected held-out bound of the test chosen on one selection sample drawn from (p0, p1)."""
    rng = np.random.default_rng(seed)
    rows = outcome_rows(len(p0) - 1)
    out0, out1 = (rows[rng.choice(len(p), selection, p=p / p.sum())] for p in (p0, p1))
    held, level = TRIALS - selection, discrete_level(len(p0))
    choice = select_test(out0, out1, objective=projected_bound(held, 0.0, BETA, level=level, interval="ratio"),
                         categories=len(p0) if count else None)
    rejected = choice.test.rejects(rows)
    a, b = p0[rejected].sum(), p1[rejected].sum()
    direction = held_out_direction(choice, held, BETA, level)
    return float(kov_ratio_bounds(held * a, held, held * (1.0 - b), held, BETA)[direction])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="selection samples per row (default 20)")
    seeds = range(parser.parse_args().seeds)
    table = Table(title=f"Exact expected bound of the chosen test, 10⁷ trials, 90%, seeds 0–{seeds[-1]}",
                  caption="mean (worst); hits: runs within 0.001 of the best test")
    table.add_column("mechanism")
    table.add_column("selection")
    table.add_column("best test", justify="right")
    for count in (False, True):
        table.add_column("table on all outputs" if count else "halves, all scorers", justify="right")
        table.add_column("hits", justify="right")
    for name, params in CASES:
        p0, p1 = svt_laws(name, params)
        for share in SHARES:
            selection = int(TRIALS * share)
            best = best_event_bound(p0, p1, n=TRIALS - selection, beta=BETA)
            cells = []
            for count in (False, True):
                bounds = np.array([chosen_bound(p0, p1, selection=selection, count=count, seed=s) for s in seeds])
                cells += [f"{bounds.mean():.4f} ({bounds.min():.4f})", f"{np.sum(bounds >= best - 0.001)}/{len(bounds)}"]
            table.add_row(name, f"{share:.0%}", f"{best:.4f}", *cells)
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
