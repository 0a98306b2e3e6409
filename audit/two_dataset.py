"""`audit_mechanism`: the end-to-end black-box audit on two neighbouring datasets.

Flow: draw a selection sample on D0 and D1 → choose a distinguishing test on
it → draw fresh held-out samples in seeded chunks and count the test's errors
→ Clopper–Pearson ε lower bound (Kairouz, Oh, Viswanath 2015; Jagielski,
Ullman, Oprea 2020) → beside the theory upper bound → verdict.
"""

from __future__ import annotations

import functools
import time
from typing import Any, Callable

import numpy as np
from dp_accounting import dp_event

from attacks.distinguish import Objective, select_test
from attacks.pair_search import InputSpace, search_pair
from audit.estimators.clopper_pearson import epsilon_lower_bound, rate_upper_bound
from audit.estimators.gdp import gdp_from_counts
from audit.estimators.lower_bound import LowerBound
from audit.result import AuditResult
from audit.runner import AuditInterrupted, Backend, CountRejections, chunk_sizes, draw, per_chunk, run_chunks, seeds
from audit.theory.upper_bound import UpperBound, upper_bound
from mechanisms.base import Mechanism, check_pair
from mechanisms.errors import InvalidParameterError, MechanismError
from mechanisms.validation import check_delta, check_int, check_probability_open

MIN_TRIALS = 10
MAX_SELECTION = 200_000
SELECTION_LEVEL = 0.005


def split_budget(trials: int) -> tuple[int, int]:
    """Return (selection, held-out) sample sizes per dataset: about 10% to choose the test."""
    selection = min(max(trials // 10, min(trials // 3, 2000)), MAX_SELECTION)
    return selection, trials - selection


def projected_bound(n: int, delta: float, beta: float) -> Objective:
    """Return the objective that chooses a test: the bound it would certify on `n` held-out trials.

    The selection counts are first replaced by their Clopper–Pearson upper
    bounds at level SELECTION_LEVEL (about 2.6 standard errors), so that a
    threshold in a far tail, whose few selection errors are mostly luck, does
    not win among hundreds of candidates (winner's curse); the level was set
    by `benchmarks/selection_level.py`. This only steers the choice:
    soundness comes from estimating the chosen test on fresh samples.
    """

    def objective(fp: np.ndarray, n0: int, fn: np.ndarray, n1: int) -> np.ndarray:
        fpr = rate_upper_bound(fp, n0, SELECTION_LEVEL)
        fnr = rate_upper_bound(fn, n1, SELECTION_LEVEL)
        return epsilon_lower_bound(fpr * n, n, fnr * n, n, delta=delta, beta=beta)

    return objective


def theory_upper_bound(mech: Mechanism, delta: float) -> UpperBound:
    """Return the theory upper bound: from the mechanism's event, else its claim (a black box)."""
    if not isinstance(mech.event, dp_event.UnsupportedDpEvent):
        return upper_bound(mech.event, delta=delta, relation=mech.claim.relation.value)
    if mech.buggy:
        return UpperBound(float("inf"), delta, "unknown")
    return UpperBound(mech.claim.epsilon, mech.claim.delta, "claim")


def _resolve_pair(
    mech: Mechanism, d0: Any, d1: Any, search: bool | InputSpace, *, objective: Objective, budget: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    given = d0 is not None or d1 is not None
    if given and search:
        raise InvalidParameterError("Pass d0 and d1, or ask for a pair search, not both.")
    if d0 is None and d1 is None:
        if search:
            space = search if isinstance(search, InputSpace) else None
            d0, d1 = search_pair(mech, objective=objective, budget=budget, seed=seed, space=space)
        elif mech.default_pair is None:
            raise InvalidParameterError(
                f"Mechanism '{mech.name}' has no default neighbouring pair; pass d0 and d1, or search=InputSpace(...)."
            )
        else:
            d0, d1 = mech.default_pair
    elif d0 is None or d1 is None:
        raise InvalidParameterError("Pass both d0 and d1, or neither to use the mechanism's default pair.")
    return check_pair(mech, d0, d1)


def _selection(mech: Mechanism, d0: np.ndarray, d1: np.ndarray, size: int, seed: np.random.SeedSequence):
    try:
        out0, out1 = draw(mech, d0, d1, size, seed)
    except MechanismError as exc:
        raise MechanismError(f"{str(exc).rstrip('.')} (selection phase).") from exc
    if out0.shape[1:] != out1.shape[1:]:
        raise MechanismError(
            f"Mechanism '{mech.name}' returned outputs of changing shape: {out0.shape[1:]} on d0, {out1.shape[1:]} on d1."
        )
    return out0, out1


def audit_mechanism(
    mechanism: Mechanism,
    d0: Any = None,
    d1: Any = None,
    *,
    trials: int = 1_000_000,
    seed: int = 0,
    confidence: float = 0.95,
    delta: float | None = None,
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    search: bool | InputSpace = False,
) -> AuditResult:
    """Audit `mechanism` on neighbours (d0, d1); return an `AuditResult`.

    `trials` outputs are drawn from each dataset: about 10% choose the test,
    the rest estimate its error rates. The lower bound holds with probability
    ≥ `confidence`: the test is fixed before the held-out outputs are drawn,
    and the Clopper–Pearson bounds on FPR and FNR each get half of
    1 − `confidence`. `delta` defaults to the claim's δ. The same `seed` gives
    the same result, in process (default), on `workers` local Dask processes
    or on the Dask cluster at `scheduler`. `progress(n)` is called as n more
    trials per dataset finish (none by default).

    With `search` (True, or an `attacks.pair_search.InputSpace` to draw
    random pairs from) and no d0/d1, the pair is chosen first among StatDP's
    patterns and random pairs on `trials // 2` further outputs per dataset
    from a separate seed stream, so the final bound needs no correction.
    """
    if not isinstance(mechanism, Mechanism):
        raise InvalidParameterError(
            f"audit_mechanism needs a Mechanism; got {type(mechanism).__name__} (wrap a function with mechanisms.blackbox)."
        )
    trials = check_int(trials, "trials", "audit_mechanism", low=MIN_TRIALS)
    seed = check_int(seed, "seed", "audit_mechanism", low=0)
    confidence = check_probability_open(confidence, "confidence", "audit_mechanism")
    delta = mechanism.claim.delta if delta is None else check_delta(delta, "audit_mechanism")
    backend = Backend(workers=workers, scheduler=scheduler)
    beta = 1.0 - confidence
    start = time.perf_counter()
    n_select, n_held = split_budget(trials)
    d0, d1 = _resolve_pair(
        mechanism, d0, d1, search, objective=projected_bound(n_held, delta, beta), budget=trials // 2, seed=seed
    )

    out0, out1 = _selection(mechanism, d0, d1, n_select, np.random.SeedSequence(seed).spawn(1)[0])
    choice = select_test(out0, out1, objective=projected_bound(n_held, delta, beta))
    sizes = chunk_sizes(n_held, per_chunk(int(np.prod(out0.shape[1:], dtype=int))))
    chunk_seeds = seeds(seed, len(sizes))[1:]
    if progress:
        progress(n_select)
    task = CountRejections(mechanism, d0, d1, choice.test)
    count = functools.partial(
        _build_result, mechanism, trials=trials, n_select=n_select, delta=delta, confidence=confidence, seed=seed,
        start=start, test=choice.test.describe(), search=({"trials": trials // 2, "d0": d0, "d1": d1} if search else None),
    )
    try:
        rejected = run_chunks(task, sizes, chunk_seeds, name=mechanism.name, seed=seed, backend=backend, progress=progress)
    except AuditInterrupted as stop:
        if stop.trials:
            stop.result = count(stop.counts, stop.trials, interrupted=True)
        raise
    return count(rejected, n_held)


def _build_result(
    mechanism: Mechanism,
    rejected: np.ndarray,
    n_held: int,
    *,
    trials: int,
    n_select: int,
    delta: float,
    confidence: float,
    seed: int,
    start: float,
    test: str,
    search: dict | None,
    interrupted: bool = False,
) -> AuditResult:
    """Return the result from the held-out rejection counts [among d0 outputs, among d1 outputs] of `n_held` trials each."""
    fp, fn = int(rejected[0]), int(n_held - rejected[1])
    details = {"held_out": n_held, "selection": n_select, "false_positives": fp, "false_negatives": fn}
    if search:
        details["pair_search"] = search
    if interrupted:
        details["interrupted"] = True
    lower = LowerBound(
        epsilon=float(epsilon_lower_bound(fp, n_held, fn, n_held, delta=delta, beta=1.0 - confidence)),
        confidence=confidence,
        method="clopper-pearson",
        delta=delta,
        trials=n_select + n_held if interrupted else trials,
        fpr=fp / n_held,
        fnr=fn / n_held,
        details=details,
    )
    return AuditResult(
        mechanism=mechanism.name,
        params=dict(mechanism.params),
        claim=mechanism.claim,
        upper_bound=theory_upper_bound(mechanism, delta),
        lower_bound=lower,
        seconds=time.perf_counter() - start,
        seed=seed,
        test=test,
        secondary=assumption_bounds(fp, fn, n_held, delta=delta, confidence=confidence),
    )


def assumption_bounds(fp: int, fn: int, n: int, *, delta: float, confidence: float) -> tuple[LowerBound, ...]:
    """Return the bounds that hold only under an assumption, from the same held-out counts.

    The Gaussian-DP bound (Nasr et al. 2023) at δ > 0: far tighter for
    Gaussian-like mechanisms, labelled with its assumption and never used
    for the verdict. At δ = 0 a GDP ε is infinite, so none is given.
    """
    if delta == 0.0:
        return ()
    return (gdp_from_counts(fp, n, fn, n, delta=delta, confidence=confidence),)
