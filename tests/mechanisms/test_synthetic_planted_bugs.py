"""A marginal-based generator written here, its three planted bugs flagged and its correct twin not (black- and white-box).

Black-box: each synthetic table is made into the target's features (`tabulate`) and audited on the worst-case
pair by `audit_mechanism`. The bug "measured twice, charged once" multiplies the Gaussian μ by √2 only, which
the sampled table hides at test budgets (the (ε, δ) bound on 2,000 tables is about 0.1), so it is audited
white-box, on the noisy marginals at the target's cells, with the GDP estimator (Gaussian noise: its
assumption holds). A correct generator is flagged at most a fraction β of the time (1 − confidence); the
seeds are fixed.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from dpaudit.attacks.games import MultiRun
from dpaudit.audit import Bound, audit_canaries, audit_mechanism
from dpaudit.mechanisms.table_features import tabulate
from dpaudit.mechanisms.worst_case_tables import TableDomain
from marginal_generators import marginal_generator

DOMAIN = TableDomain.uniform(3, 3)
TABLES = 2_000
RUNS = 10_000


@dataclasses.dataclass(frozen=True)
class TargetCells:
    """White-box score: the sum of the released noisy marginals at the target's cells (fixed before the game)."""

    cells: tuple[int, ...]
    name: str = "target-cells"

    def score(self, outputs: np.ndarray, canaries) -> np.ndarray:
        total = np.asarray(outputs, dtype=float)[:, list(self.cells)].sum(axis=1)
        return np.repeat(total[:, None], canaries.size, axis=1)


def _target_cells() -> tuple[int, ...]:
    offsets = np.concatenate([[0], np.cumsum(DOMAIN.categories)[:-1]])
    return tuple(int(o + t) for o, t in zip(offsets, DOMAIN.target()))


@pytest.mark.parametrize("bug", ["noise-by-length", "data-domain"])
def test_a_planted_bug_in_a_table_generator_is_flagged_black_box(bug: str) -> None:
    mech = tabulate(marginal_generator(DOMAIN, epsilon=1.0, delta=1e-5, bug=bug), DOMAIN.target(), columns=DOMAIN.columns)
    res = audit_mechanism(mech, trials=TABLES, seed=0)
    assert res.verdict == "violation" and res.lower_bound.epsilon > 1.0


def test_the_correct_table_generator_is_not_flagged_black_box() -> None:
    mech = tabulate(marginal_generator(DOMAIN, epsilon=1.0, delta=1e-5), DOMAIN.target(), columns=DOMAIN.columns)
    res = audit_mechanism(mech, trials=TABLES, seed=0)
    assert res.verdict == "consistent" and res.lower_bound.epsilon <= 1.0


@pytest.mark.parametrize("bug, flagged", [("measured-twice", True), (None, False)])
def test_a_marginal_measured_twice_and_charged_once_is_flagged_white_box(bug: str | None, flagged: bool) -> None:
    # ε = 4: the claim's μ is about 0.95 and the bug's 1.35, apart by far more than 10,000 runs blur.
    mech = marginal_generator(DOMAIN, epsilon=4.0, delta=1e-5, bug=bug, release="measurements")
    res = audit_canaries(mech, game=MultiRun(runs=RUNS), bound=Bound(estimator="gdp"), canary="pair",
                         scorer=TargetCells(_target_cells()), seed=0)
    assert res.verdict.startswith("violation") == flagged
    assert (res.lower_bound.epsilon > 4.0) == flagged
