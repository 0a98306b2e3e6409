"""`audit_mechanism`: the end-to-end black-box audit on two neighbouring datasets.

Flow: draw a selection sample on D0 and D1 → choose a distinguishing test on
it → draw fresh held-out samples in seeded chunks and count the test's errors
→ Clopper–Pearson ε lower bound (Kairouz, Oh, Viswanath 2015; Jagielski,
Ullman, Oprea 2020), or for pure ε one interval on the ratio of the
event's Poisson counts (`dpaudit.audit.estimators.rate_ratio`) → beside the theory
upper bound → verdict.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import time
from typing import Any, Callable, Iterator

import numpy as np
from dpaudit.attacks.distinguish import Objective, distinct_outputs, is_discrete, select_test
from dpaudit.attacks.held_out_counts import HeldOutCounts
from dpaudit.attacks.output_histogram import OutputHistogram, cell_counts, grid_from
from dpaudit.attacks.pair_search import InputSpace, search_pair
from dpaudit.audit.audits.advice import trials_for_violation
from dpaudit.audit.audits.auto_trials import AUTO, FIRST_ROUND, AutoBudget, audit_in_rounds, first_round
from dpaudit.audit.audits.reproducibility import global_streams, streams_warning
from dpaudit.audit.audits.screening import Screen, columns, on_whole_outputs, screen_coordinates
from dpaudit.audit.audits.selection_policy import (
    ATOM_LEVEL,
    discrete_selection_size,
    held_out_direction,
    projected_bound,
    screening_size,
    selection_level,
    split_budget,
)
from dpaudit.audit.estimators.held_out import held_out_assumption_bounds, held_out_lower_bound
from dpaudit.audit.estimators.histogram_bands import histogram_gdp_bound, histogram_lower_bound
from dpaudit.audit.execution.backends import run_chunks
from dpaudit.audit.execution.runner import (
    AuditInterrupted,
    Backend,
    CountCells,
    CountRejections,
    chunk_sizes,
    draw,
    per_chunk,
    seeds,
)
from dpaudit.audit.results.result import AuditResult
from dpaudit.audit.theory.upper_bound import UpperBound, upper_bound
from dpaudit.mechanisms.base import Mechanism, check_pair
from dpaudit.mechanisms.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms.outputs import check_shape
from dpaudit.mechanisms.validation import check_delta, check_int, check_probability_open

__all__ = ["INTERVALS", "audit_mechanism", "theory_upper_bound"]

MIN_TRIALS = 10
PROBE_KEY = 0x7153
"""The timing probe of `trials="auto"` under a time budget draws from SeedSequence([seed, PROBE_KEY]), apart from the audit's streams."""
INTERVALS = ("two-rates", "ratio", "bands")


def _check_interval(interval: Any, delta: float) -> str:
    """Return `interval` if it is one of INTERVALS and fits `delta`; else raise one sentence."""
    if interval not in INTERVALS:
        raise InvalidParameterError(
            f"The 'interval' parameter of audit_mechanism must be one of {', '.join(INTERVALS)}; got {interval!r} instead."
        )
    if interval == "ratio" and delta > 0.0:
        raise InvalidParameterError(
            f"The ratio interval certifies pure ε only; audit at δ = 0 or use the two-rates interval (δ is {delta:g})."
        )
    return interval


def theory_upper_bound(mech: Mechanism, delta: float) -> UpperBound:
    """Return the theory upper bound at `delta`: from the mechanism's event, else from its claim (a black box).

    A claim (ε, δ₀) bounds ε at δ ≥ δ₀ only (at larger δ, by the (ε, δ₀)
    region's ε(δ), Kairouz, Oh, Viswanath 2015, Thm 2.1); below δ₀ it
    bounds nothing, and the upper bound is ∞.
    """
    from dp_accounting import dp_event
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    if not isinstance(mech.event, dp_event.UnsupportedDpEvent):
        return upper_bound(mech.event, delta=delta, relation=mech.claim.relation.value)
    if mech.buggy:
        return UpperBound(float("inf"), delta, "unknown")
    claimed = upper_bound(EpsilonDeltaDpEvent(mech.claim.epsilon, mech.claim.delta), delta=delta)
    return UpperBound(claimed.epsilon, delta, "claim")


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
                f"Mechanism '{mech.name}' has no default neighbouring pair; give it one with "
                "blackbox(..., default_pair=(d0, d1)), or pass d0 and d1 to audit_mechanism."
            )
        else:
            d0, d1 = mech.default_pair
    elif d0 is None or d1 is None:
        raise InvalidParameterError("Pass both d0 and d1, or neither to use the mechanism's default pair.")
    return check_pair(mech, d0, d1)


@contextlib.contextmanager
def _selection_phase() -> Iterator[None]:
    """Re-raise a `MechanismError` raised in the block with "(selection phase)" appended."""
    try:
        yield
    except MechanismError as exc:
        raise MechanismError(f"{str(exc).rstrip('.')} (selection phase).") from exc


def _selection(mech: Mechanism, d0: np.ndarray, d1: np.ndarray, size: int, seed: np.random.SeedSequence):
    with _selection_phase():
        out0, out1 = draw(mech, d0, d1, size, seed)
    if out0.shape[1:] != out1.shape[1:]:
        raise MechanismError(
            f"Mechanism '{mech.name}' returned outputs of changing shape: {out0.shape[1:]} on d0, {out1.shape[1:]} on d1."
        )
    return out0, out1


def _output_shape(mech: Mechanism, d0: Any, seed: int) -> tuple[int, ...]:
    """Return the shape of one output, from one draw on its own stream (the selection seed's second child)."""
    with _selection_phase():
        probe = mech.sample(d0, 1, np.random.default_rng(_selection_seed(seed).spawn(2)[1]))
    return tuple(probe.shape[1:])


def _selection_seed(seed: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(seed).spawn(1)[0]


def _draw_selection(
    mech: Mechanism, d0: Any, d1: Any, size: int, seed: np.random.SeedSequence, kept: Screen | None, elements: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return `size` selection outputs per dataset from `seed`: whole, or, drawn in chunks (`seed`'s children),
    only the screened view (`kept`) of wide outputs of `elements` numbers.

    The selection seed's children: 0 grows a discrete selection, 1 draws the
    probe, 2 screens, 3 draws a screened selection.
    """
    if kept is None:
        return _selection(mech, d0, d1, size, seed)
    sizes = chunk_sizes(size, per_chunk(elements))
    parts = [[columns(out, kept) for out in _selection(mech, d0, d1, n, child)] for n, child in zip(sizes, seed.spawn(len(sizes)))]
    return tuple(np.concatenate([p[k] for p in parts]) for k in (0, 1))


def _discrete_selection(
    mech: Mechanism, d0: Any, d1: Any, out0: np.ndarray, out1: np.ndarray, *, trials: int, seed: int,
    kept: Screen | None, elements: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Return the selection outputs grown to `discrete_selection_size` with draws from the selection seed's first child."""
    size = discrete_selection_size(trials, int(np.prod(out0.shape[1:], dtype=int)))
    if size <= len(out0):
        return out0, out1
    more0, more1 = _draw_selection(mech, d0, d1, size - len(out0), _selection_seed(seed).spawn(1)[0], kept, elements)
    check_shape(mech.name, more0, out0.shape[1:], "in the selection phase")
    return np.concatenate([out0, more0]), np.concatenate([out1, more1])


def _screen(mech: Mechanism, d0: Any, d1: Any, *, trials: int, elements: int, seed: int) -> tuple[Screen | None, int]:
    """Return the `Screen` of wide outputs (`dpaudit.audit.audits.screening`) and the outputs it drew, or (None, 0)."""
    size = screening_size(trials, elements)
    if not size:
        return None, 0
    with _selection_phase():
        kept = screen_coordinates(mech, d0, d1, size=size, elements=elements, seed=_selection_seed(seed).spawn(3)[2])
    return kept, size


def audit_mechanism(
    mechanism: Mechanism,
    d0: Any = None,
    d1: Any = None,
    *,
    trials: int | str = 1_000_000,
    seed: int = 0,
    confidence: float = 0.95,
    delta: float | None = None,
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    search: bool | InputSpace = False,
    interval: str = "two-rates",
    budget: AutoBudget | None = None,
) -> AuditResult:
    """Audit `mechanism` on neighbours (d0, d1); return an `AuditResult`.

    About `trials` outputs are drawn from each dataset: about 10% (20%, up
    to 2·10⁶, for discrete outputs) choose the test, the rest (a Poisson number
    with that mean, per dataset) estimate its error rates. The lower bound
    holds with probability ≥ `confidence`, since the test is fixed before the
    held-out outputs are drawn. `interval` says how it is computed:

    - "two-rates" (default): Clopper–Pearson upper bounds on FPR and FNR at
      half of 1 − `confidence` each (Kairouz, Oh, Viswanath). Conservative:
      a correct mechanism that is exactly tight is flagged far less often
      than 1 − `confidence` (about 0.5% of audits at 95%).
    - "ratio" (pure ε, δ = 0 only): one Clopper–Pearson bound at all of
      1 − `confidence` on the ratio of the rejection set's Poisson counts,
      its direction fixed on the selection split (`dpaudit.audit.estimators.rate_ratio`).
      Needs about a third of the samples for the same bound, and flags an
      exactly tight correct mechanism in up to 1 − `confidence` of audits,
      as its confidence says.
    - "bands" (scalar outputs): no held-out split; every output is counted
      and the threshold test chosen after, its rates bounded by simultaneous
      bands (`dpaudit.audit.estimators.histogram_bands`). Stronger where the
      best test is a threshold (Gaussian noise at δ > 0), blind to leaks
      only other tests see (`benchmarks/two_dataset_intervals.py`).

    `delta` defaults to the claim's δ. The same `seed` gives the same
    result, in process (default), on `workers` local Dask processes or on
    the Dask cluster at `scheduler`. `progress(n)` is called as n more
    trials per dataset finish (none by default).

    `trials="auto"` audits in rounds of growing size (`dpaudit.audit.audits.auto_trials`)
    until a violation is certified, the bound reaches a fraction of the
    claim, or `budget` (an `AutoBudget`: trials, seconds) is spent; each
    round pays its share of 1 − `confidence`, and the details say how many
    trials were drawn in all (`lower_bound.details["auto"]`).

    With `search` (True, or an `dpaudit.attacks.pair_search.InputSpace` to draw
    random pairs from) and no d0/d1, the pair is chosen first among StatDP's
    patterns and random pairs on `trials // 2` further outputs per dataset
    from a separate seed stream, so the final bound needs no correction.

    Args:
        mechanism: the `Mechanism` to audit (its claim and relation decide the verdict).
        d0, d1: the neighbouring datasets (default: the mechanism's worst-case pair, or a search).
        trials: outputs per dataset, or "auto" for rounds that stop at a verdict or `budget`.
        seed, confidence, delta: of the audit (δ defaults to the claim's).
        progress, workers, scheduler: a progress callback; local Dask processes or a cluster.
        search, interval, budget: pair search, the interval ("two-rates", "ratio" or "bands"), the auto budget.

    Returns:
        An `AuditResult`: claim, theory upper bound, certified lower bound, verdict.

    Raises:
        InvalidParameterError: on bad input (one sentence).
        MechanismError: when the mechanism raises, changes its output shape or exits.
        AuditInterrupted: on Ctrl-C, carrying the bound of the held-out chunks that finished.
    """
    if not isinstance(mechanism, Mechanism):
        raise InvalidParameterError(
            f"audit_mechanism needs a Mechanism; got {type(mechanism).__name__} (wrap a function with dpaudit.mechanisms.blackbox)."
        )
    if trials == AUTO:
        return _audit_auto(
            mechanism, d0, d1, budget=budget or AutoBudget(), seed=seed, confidence=confidence, delta=delta,
            progress=progress, workers=workers, scheduler=scheduler, search=search, interval=interval,
        )
    trials = check_int(trials, "trials", "audit_mechanism", low=MIN_TRIALS)
    seed = check_int(seed, "seed", "audit_mechanism", low=0)
    confidence = check_probability_open(confidence, "confidence", "audit_mechanism")
    delta = mechanism.claim.delta if delta is None else check_delta(delta, "delta", "audit_mechanism")
    interval = _check_interval(interval, delta)
    backend = Backend(workers=workers, scheduler=scheduler)
    beta = 1.0 - confidence
    start, streams = time.perf_counter(), global_streams()
    n_select, n_held = split_budget(trials)
    d0, d1 = _resolve_pair(
        mechanism, d0, d1, search, objective=projected_bound(n_held, delta, beta, interval=interval), budget=trials // 2, seed=seed
    )

    shape = _output_shape(mechanism, d0, seed)
    elements = int(np.prod(shape, dtype=int))
    if interval == "bands":
        return _audit_bands(mechanism, d0, d1, shape=shape, trials=trials, seed=seed, confidence=confidence,
                            delta=delta, backend=backend, progress=progress, start=start, streams=streams,
                            search=({"trials": trials // 2, "d0": d0, "d1": d1} if search else None))
    kept, n_screen = _screen(mechanism, d0, d1, trials=trials, elements=elements, seed=seed)
    n_select, n_held = split_budget(trials - n_screen, elements if kept is None else kept.width())
    first = _selection_seed(seed) if kept is None else _selection_seed(seed).spawn(4)[3]
    out0, out1 = _draw_selection(mechanism, d0, d1, n_select, first, kept, elements)
    discrete = is_discrete(out0, out1)
    if discrete:
        out0, out1 = _discrete_selection(mechanism, d0, d1, out0, out1, trials=trials - n_screen, seed=seed,
                                          kept=kept, elements=elements)
        n_select, n_held = len(out0), trials - n_screen - len(out0)
    categories = distinct_outputs(out0, out1) if discrete else None
    level = selection_level(categories)
    choice = select_test(out0, out1, objective=projected_bound(n_held, delta, beta, level=level, interval=interval),
                         categories=categories,
                         atom_objective=projected_bound(n_held, delta, beta, level=ATOM_LEVEL, interval=interval))
    if kept is not None:
        test = dataclasses.replace(choice.test, scorer=on_whole_outputs(choice.test.scorer, kept))
        choice = dataclasses.replace(choice, test=test)
    n_select += n_screen
    direction = held_out_direction(choice, n_held, beta, level) if interval == "ratio" else None
    sizes = chunk_sizes(n_held, per_chunk(elements))
    chunk_seeds = seeds(seed, len(sizes))[1:]
    if progress:
        progress(n_select)
    warning = streams_warning(streams)  # the selection phase runs here, in process, whatever the backend
    task = CountRejections(mechanism, d0, d1, choice.test, shape)
    count = functools.partial(
        _build_result, mechanism, trials=trials, n_select=n_select, delta=delta, confidence=confidence, seed=seed,
        start=start, test=choice.test.describe(), direction=direction,
        search=({"trials": trials // 2, "d0": d0, "d1": d1} if search else None), warning=warning,
        screened=None if kept is None else {"trials": n_screen, "coordinates": kept.kept.tolist()},
    )
    try:
        counts = run_chunks(task, sizes, chunk_seeds, name=mechanism.name, seed=seed, backend=backend, progress=progress)
    except AuditInterrupted as stop:
        partial = count(stop.counts, stop.trials, interrupted=True) if stop.trials else None
        raise AuditInterrupted(stop.counts, stop.trials, result=partial) from None
    return count(counts, n_held)


def _audit_bands(mechanism: Mechanism, d0: Any, d1: Any, *, shape: tuple[int, ...], trials: int, seed: int,
                 confidence: float, delta: float, backend: Backend, progress: Callable[[int], None] | None,
                 start: float, streams: Any, search: dict | None) -> AuditResult:
    """Return the audit of scalar outputs with every output counted and the threshold chosen after (`histogram_bands`).

    Scalar means one number per output once `dpaudit.mechanisms.outputs` has
    mapped it (text and categories become fixed codes, a valid order for
    threshold tests; complex numbers become two numbers and are refused).

    A first sample (the usual selection size) places the grid and is counted
    too; the rest is drawn in seeded chunks on `backend`. The bands hold at
    every grid threshold at once, so nothing is held out.
    """
    if int(np.prod(shape, dtype=int)) != 1:
        raise InvalidParameterError(
            f"The bands interval needs scalar outputs; mechanism '{mechanism.name}' returns outputs of shape {shape}."
        )
    n_first, n_rest = split_budget(trials)
    out0, out1 = _selection(mechanism, d0, d1, n_first, _selection_seed(seed))
    grid = grid_from(out0, out1)
    first = np.concatenate([cell_counts(grid, out0), cell_counts(grid, out1)])
    sizes = chunk_sizes(n_rest, per_chunk(1))
    if progress:
        progress(n_first)
    warning = streams_warning(streams)
    build = functools.partial(_build_band_result, mechanism, grid, delta=delta, confidence=confidence, seed=seed,
                              start=start, search=search, warning=warning)
    try:
        counts = run_chunks(CountCells(mechanism, d0, d1, grid, shape), sizes, seeds(seed, len(sizes))[1:],
                            name=mechanism.name, seed=seed, backend=backend, progress=progress)
    except AuditInterrupted as stop:
        partial = build(first + stop.counts, trials=n_first + stop.trials, interrupted=True)
        raise AuditInterrupted(stop.counts, stop.trials, result=partial) from None
    return build(first + counts, trials=trials)


def _build_band_result(mechanism: Mechanism, grid: np.ndarray, counts: np.ndarray, *, trials: int, delta: float,
                       confidence: float, seed: int, start: float, search: dict | None, warning: str | None,
                       interrupted: bool = False) -> AuditResult:
    """Return the result of the bands interval from the cell counts of every output drawn (about `trials` per dataset)."""
    hist = OutputHistogram.from_vector(grid, counts)
    lower = histogram_lower_bound(hist, delta=delta, confidence=confidence)
    extra = {"pair_search": search, "interrupted": interrupted or None, "warning": warning}
    details = {"held_out": trials, "selection": 0, **lower.details, **{k: v for k, v in extra.items() if v}}
    lower = dataclasses.replace(lower, trials=trials, details=details)
    secondary = (histogram_gdp_bound(hist, delta=delta, confidence=confidence),) if delta > 0.0 else ()
    return AuditResult(
        mechanism=mechanism.name, params=dict(mechanism.params), claim=mechanism.claim,
        upper_bound=theory_upper_bound(mechanism, delta), lower_bound=lower, seconds=time.perf_counter() - start,
        seed=seed, test=lower.details["test"], secondary=secondary,
    )


def _audit_auto(mechanism: Mechanism, d0: Any, d1: Any, *, budget: AutoBudget, seed: int, confidence: float,
                search: bool | InputSpace, **options: Any) -> AuditResult:
    """Return the audit in rounds of `dpaudit.audit.audits.auto_trials` on one pair (searched first, on the first round's budget)."""
    seed = check_int(seed, "seed", "audit_mechanism", low=0)
    confidence = check_probability_open(confidence, "confidence", "audit_mechanism")
    objective = projected_bound(FIRST_ROUND, mechanism.claim.delta, 1.0 - confidence)
    d0, d1 = _resolve_pair(mechanism, d0, d1, search, objective=objective, budget=FIRST_ROUND // 2, seed=seed)
    probe = np.random.default_rng(np.random.SeedSequence([seed, PROBE_KEY]))
    with _selection_phase():
        first = first_round(lambda n: (mechanism.sample(d0, n, probe), mechanism.sample(d1, n, probe)), budget.max_seconds)

    def run_round(trials: int, round_seed: int, round_confidence: float) -> AuditResult:
        return audit_mechanism(mechanism, d0, d1, trials=trials, seed=round_seed, confidence=round_confidence, **options)

    return audit_in_rounds(run_round, seed=seed, confidence=confidence, epsilon=mechanism.claim.epsilon, budget=budget,
                           first=first)


def _build_result(
    mechanism: Mechanism,
    counts: np.ndarray,
    n_held: int,
    *,
    trials: int,
    n_select: int,
    delta: float,
    confidence: float,
    seed: int,
    start: float,
    test: str,
    direction: int | None,
    search: dict | None,
    screened: dict | None = None,
    interrupted: bool = False,
    warning: str | None = None,
) -> AuditResult:
    """Return the result from the held-out counts [d0 rejections, d1 rejections, d0 outputs, d1 outputs].

    `n_held` is the expected number of held-out outputs per dataset (each
    count is Poisson with that mean).
    """
    evidence = HeldOutCounts.from_rejections(counts, direction=direction)
    held = held_out_lower_bound(evidence, delta=delta, confidence=confidence)
    facts = dict(held.details)
    details = {"held_out": n_held, "held_out_d0": facts.pop("held_out_d0"), "held_out_d1": facts.pop("held_out_d1"),
               "selection": n_select, **facts}
    if search:
        details["pair_search"] = search
    if screened:
        details["screening"] = screened
    if interrupted:
        details["interrupted"] = True
    if warning:
        details["warning"] = warning
    lower = dataclasses.replace(held, trials=n_select + n_held if interrupted else trials, details=details)
    e = evidence
    advice = None if interrupted else trials_for_violation(
        e.false_positives, e.n0, e.false_negatives, e.n1, claim=mechanism.claim.epsilon, delta=delta,
        beta=1.0 - confidence,
    )
    if advice is not None and delta >= mechanism.claim.delta and lower.epsilon <= mechanism.claim.epsilon:
        lower = dataclasses.replace(lower, details={**details, "trials_for_violation": max(advice, trials)})
    return AuditResult(
        mechanism=mechanism.name,
        params=dict(mechanism.params),
        claim=mechanism.claim,
        upper_bound=theory_upper_bound(mechanism, delta),
        lower_bound=lower,
        seconds=time.perf_counter() - start,
        seed=seed,
        test=test,
        secondary=held_out_assumption_bounds(evidence, delta=delta, confidence=confidence),
    )
