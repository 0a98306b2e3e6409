"""`audit_mechanism`: the black-box audit on two neighbouring datasets.

The same path as every audit: check the input once → play the game
(`two_dataset_play`: a test chosen on some outputs, its errors counted on
fresh ones, or every output counted) → `certify(evidence, bound)` → an
`AuditResult` beside the theory upper bound, keeping its evidence for
`recertify`. `trials="auto"` plays rounds of growing size
(`auto_trials`), each a game of its own certified at its share of β.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

import numpy as np
from dpaudit.attacks.distinguish import Objective
from dpaudit.attacks.games import TwoDataset
from dpaudit.attacks.held_out_counts import HeldOutCounts
from dpaudit.attacks.output_histogram import OutputHistogram
from dpaudit.attacks.pair_search import HUNT, InputSpace, hunt_pair, search_pair
from dpaudit.attacks.selection_budget import split_budget
from dpaudit.attacks.two_dataset_play import PlayedPair, Setting, play
from dpaudit.audit.audits.advice import trials_for_violation
from dpaudit.audit.audits.auto_trials import AUTO, FIRST_ROUND, AutoBudget, audit_in_rounds, first_round
from dpaudit.audit.audits.default_trials import DEFAULT_TRIALS, default_trials
from dpaudit.audit.audits.sequential_trials import SEQUENTIAL, audit_sequentially, check_sequential
from dpaudit.audit.estimators.certify import Bound, bounds_beside, certify
from dpaudit.audit.estimators.intervals import INTERVALS, Bands, TwoRates, interval_named
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.projection import projected_bound, steering
from dpaudit.audit.results.phases import Phases
from dpaudit.audit.results.result import AuditResult
from dpaudit.audit.theory.upper_bound import theory_upper_bound
from dpaudit.errors import InvalidParameterError
from dpaudit.execution.execution import Execution
from dpaudit.execution.interrupted import Interrupted
from dpaudit.execution.progress import progress_of
from dpaudit.execution.reproducibility import global_streams
from dpaudit.mechanisms.base import Mechanism, check_pair
from dpaudit.validation import check_delta, check_int, check_probability_open

__all__ = ["INTERVALS", "audit_mechanism"]

MIN_TRIALS = 10
PROBE_KEY = 0x7153
"""The timing probe of `trials="auto"` under a time budget draws from SeedSequence([seed, PROBE_KEY]), apart from the audit's streams."""


def _resolve_pair(mech: Mechanism, d0: Any, d1: Any, search: bool | InputSpace | str, *, objective: Objective,
                  budget: int, seed: int) -> tuple[Any, Any, dict[str, Any]]:
    """Return the checked pair: the one given, the one a search chose, or the default; and what the search reports."""
    given = d0 is not None or d1 is not None
    if given and search:
        raise InvalidParameterError("Pass d0 and d1, or ask for a pair search, not both.")
    found: dict[str, Any] = {}
    if d0 is None and d1 is None:
        if search == HUNT:
            chosen, tried = hunt_pair(mech, objective=objective, budget=budget, seed=seed)
            d0, d1, found = chosen.d0, chosen.d1, {"kind": chosen.kind, "note": chosen.note, "candidates": tried}
        elif search:
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
    return (*check_pair(mech, d0, d1), found)


def _check_search(search: Any) -> bool | InputSpace | str:
    """Return `search` when it is False, True, an `InputSpace` or "hunt"; else raise the one sentence."""
    if isinstance(search, (bool, InputSpace)) or (isinstance(search, str) and search == HUNT):
        return search
    raise InvalidParameterError(
        f"The 'search' parameter of audit_mechanism must be True, False, an InputSpace or {HUNT!r}; got {search!r:.40} instead."
    )


def _bound(bound: Bound | None, confidence: float, delta: float | None, interval: str) -> Bound:
    """Return the `Bound` of the audit: the one given, or the one its shorthands (confidence, delta, interval) say."""
    if bound is None:
        return Bound(confidence=check_probability_open(confidence, "confidence", "audit_mechanism"),
                     delta=None if delta is None else check_delta(delta, "delta", "audit_mechanism"),
                     strategy=interval_named(interval))
    if not isinstance(bound, Bound):
        raise InvalidParameterError(f"The 'bound' parameter of audit_mechanism must be a Bound; got {type(bound).__name__}.")
    if (confidence, delta, interval) != (0.95, None, TwoRates.name):
        raise InvalidParameterError("Pass either bound=, or its shorthands confidence=, delta= and interval=, not both.")
    bound.interval()
    return bound


def _execution(execution: Execution | None, progress: Any, workers: int | None, scheduler: str | None) -> Execution:
    """Return the `Execution`: the one given, or the one its shorthands (progress, workers, scheduler) say."""
    if execution is None:
        return Execution(workers=workers, scheduler=scheduler, progress=progress or False)
    if not isinstance(execution, Execution):
        raise InvalidParameterError(
            f"The 'execution' parameter of audit_mechanism must be an Execution; got {type(execution).__name__}."
        )
    if (progress, workers, scheduler) != (None, None, None):
        raise InvalidParameterError("Pass either execution=, or its shorthands progress=, workers= and scheduler=, not both.")
    return execution


def audit_mechanism(
    mechanism: Mechanism,
    d0: Any = None,
    d1: Any = None,
    *,
    trials: int | str | None = None,
    seed: int = 0,
    confidence: float = 0.95,
    delta: float | None = None,
    progress: Callable[[int], None] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    search: bool | InputSpace | str = False,
    interval: str = "two-rates",
    budget: AutoBudget | None = None,
    bound: Bound | None = None,
    execution: Execution | None = None,
) -> AuditResult:
    """Audit `mechanism` on neighbours (d0, d1); return an `AuditResult`.

    About `trials` outputs are drawn from each dataset: about 10% (20%, up
    to 2·10⁶, for discrete outputs) choose the test, the rest (a Poisson number
    with that mean, per dataset) estimate its error rates. The lower bound
    holds with probability ≥ `confidence`, since the test is fixed before the
    held-out outputs are drawn. `interval` (or `bound.strategy`) says how it
    is computed (`dpaudit.audit.estimators.intervals`): "two-rates" (default;
    Clopper–Pearson on FPR and FNR at β/2 each, conservative), "ratio" (pure
    ε only: one interval at all of β on the ratio of the held-out Poisson
    counts, about a third of the samples for the same bound) or "bands"
    (scalar outputs: no split, the threshold chosen after every output is
    counted; `benchmarks/two_dataset_intervals.py`).

    `delta` defaults to the claim's δ. The same `seed` gives the same
    result, in process (default), on `workers` local Dask processes or on
    the Dask cluster at `scheduler` (or `execution=Execution(...)`, which
    also takes `progress`: True for a bar, or a callable told of the trials
    per dataset as they finish).

    `trials="auto"` audits in rounds of growing size (`auto_trials`) until a
    violation is certified, the bound reaches a fraction of the claim, or
    `budget` (an `AutoBudget`: trials, seconds) is spent; each round pays
    its share of 1 − `confidence`, and `result.phases.auto` lists them.
    `trials="sequential"` stops likewise, its bound valid at any stopping time (`sequential_trials`). Left out,
    `trials` is 10⁶, or "sequential" with `budget` (default 10⁶) for expensive draws (`default_trials`).

    With `search` (True, or an `InputSpace` to draw random pairs from) and
    no d0/d1, the pair is chosen first among StatDP's patterns and random
    pairs on `trials // 2` further outputs per dataset from a separate seed
    stream, so the final bound needs no correction. `search="hunt"` chooses
    the same way among the default pair and the neighbours a bug hunter
    would try (`dpaudit.attacks.neighbour_candidates`: records at and beyond
    bounds, NaN and ±inf, huge and tiny numbers, unseen categories, empty
    and one-record datasets, floating-point rounding datasets), each a
    neighbouring pair for the mechanism; `result.phases.pair_search` names
    the kind chosen.

    Args:
        mechanism: the `Mechanism` to audit (its claim and relation decide the verdict).
        d0, d1: the neighbouring datasets (default: the mechanism's worst-case pair, or a search).
        trials: outputs per dataset, "auto" for rounds that stop at a verdict or `budget`, "sequential", or None (the default).
        seed, confidence, delta, interval: of the audit (or `bound=Bound(confidence=, delta=, strategy=)`).
        progress, workers, scheduler: where it runs (or `execution=Execution(...)`).
        search, budget: pair search (True, an InputSpace, or "hunt"); the auto budget.

    Returns:
        An `AuditResult`: claim, theory upper bound, certified lower bound, verdict, the evidence.

    Raises:
        InvalidParameterError: on bad input (one sentence).
        MechanismError: when the mechanism raises, changes its output shape or exits.
        Interrupted: on Ctrl-C, carrying the result of the held-out chunks that finished as `partial`.
    """
    bound, trials, default, budget = _defaulted(mechanism, _bound(bound, confidence, delta, interval), trials, budget)
    audit, trials, auto = _prepare(mechanism, d0, d1, trials=trials, seed=seed, search=search, bound=bound,
                                   execution=_execution(execution, progress, workers, scheduler), default=default)
    with progress_of(audit.execution.progress, budget.max_trials if auto else trials,
                     label=f"auditing {mechanism.name}") as bar:
        if auto:
            return audit.in_rounds(budget, audit.seed, bar, auto)
        return audit.once(trials, audit.seed, time.perf_counter(), global_streams(), bar)


def _defaulted(mechanism: Mechanism, bound: Bound, trials: int | str | None,
               budget: AutoBudget | None) -> tuple[Bound, int | str, str | None, AutoBudget]:
    """Return the bound, the trials to play (`default_trials` when None), why the default chose "sequential" (or None),
    and the budget: the one given, else `AutoBudget()`, with DEFAULT_TRIALS as its trials for the sequential default."""
    default = None
    if trials is None and isinstance(mechanism, Mechanism):
        trials, default = default_trials(mechanism, bound)
    return bound, trials, default, budget or AutoBudget(**({"max_trials": DEFAULT_TRIALS} if default else {}))


def _prepare(mechanism: Mechanism, d0: Any, d1: Any, *, trials: int | str, seed: int, search: bool | InputSpace | str,
             bound: Bound, execution: Execution, default: str | None = None) -> tuple[_Audit, int, str]:
    """Return the checked audit (its pair resolved, searched first when asked), its trials, and "auto", "sequential" or ""."""
    if not isinstance(mechanism, Mechanism):
        raise InvalidParameterError(
            f"audit_mechanism needs a Mechanism; got {type(mechanism).__name__} (wrap a function with dpaudit.mechanisms.blackbox)."
        )
    seed = check_int(seed, "seed", "audit_mechanism", low=0)
    search = _check_search(search)
    auto = trials if isinstance(trials, str) and trials in (AUTO, SEQUENTIAL) else ""
    if auto == SEQUENTIAL:
        check_sequential(bound)
    trials = FIRST_ROUND if auto else check_int(trials, "trials", "audit_mechanism", low=MIN_TRIALS)
    at = bound.delta_for(mechanism.claim.delta)
    bound.estimator_for(TwoDataset(trials), at, OutputHistogram if isinstance(bound.interval(), Bands) else HeldOutCounts)
    held = FIRST_ROUND if auto else split_budget(trials)[1]
    objective = projected_bound(held, at, 1.0 - bound.confidence, interval=bound.interval().name)
    d0, d1, found = _resolve_pair(mechanism, d0, d1, search, objective=objective, budget=trials // 2, seed=seed)
    searched = {"trials": trials // 2, "d0": d0, "d1": d1, **found} if search else None
    return _Audit(mechanism, d0, d1, bound, at, execution, searched, seed, default), trials, auto


@dataclasses.dataclass(frozen=True)
class _Audit:
    """One two-dataset audit, checked: the mechanism, its pair, the bound, the δ it is certified at, where it runs."""

    mechanism: Mechanism
    d0: Any
    d1: Any
    bound: Bound
    delta: float
    execution: Execution
    searched: dict[str, Any] | None
    seed: int
    default: str | None = None
    """Why `trials` left out chose the sequential audit (`default_trials`), or None."""

    def once(self, trials: int, seed: int, start: float, streams: Any, progress: Callable[[int], None] | None) -> AuditResult:
        """Return the audit of `trials` outputs per dataset: play, certify, result (Ctrl-C: `Interrupted` with the part done)."""
        steer = steering(self.bound.interval(), self.delta, 1.0 - self.bound.confidence)
        setting = Setting(self.mechanism, self.d0, self.d1, trials, seed, steer, self.execution.backend, progress, streams)
        try:
            played = play(setting)
        except Interrupted as stop:
            partial = None if stop.partial is None else self.result(stop.partial, trials, seed, start)
            raise Interrupted(partial, done=stop.done, total=stop.total) from None
        return self.result(played, trials, seed, start)

    def result(self, played: PlayedPair, trials: int, seed: int, start: float) -> AuditResult:
        """Return the result of a played game: its evidence certified, beside the theory upper bound."""
        game, claim = TwoDataset(trials), self.mechanism.claim
        lower = certify(played.evidence, game, self.bound, delta=self.delta, rng=np.random.default_rng(seed))
        lower = dataclasses.replace(lower, trials=played.selection + played.held_out if played.interrupted else trials)
        phases = Phases(test=played.test or lower.test or "", interval=self.bound.interval().name,
                        selection=played.selection, held_out=played.held_out, screening=played.screening,
                        pair_search=self.searched, warning=played.warning, interrupted=played.interrupted,
                        trials_for_violation=None if played.interrupted else self._advice(played.evidence, lower, trials))
        return AuditResult(
            mechanism=self.mechanism.name, params=dict(self.mechanism.params), claim=claim,
            upper_bound=theory_upper_bound(self.mechanism, self.delta), lower_bound=lower,
            seconds=time.perf_counter() - start, seed=seed, test=phases.test, beside=self._beside(played, game),
            evidence=played.evidence, bound=self.bound, phases=phases,
        )

    def _beside(self, played: PlayedPair, game: TwoDataset) -> tuple[LowerBound, ...]:
        """Return the bounds of the same evidence under the Gaussian assumption (none at δ = 0, where they are ∞)."""
        return bounds_beside(played.evidence, game, self.bound, delta=self.delta, rng=np.random.default_rng(0))

    def _advice(self, evidence: Any, lower: LowerBound, trials: int) -> int | None:
        """Return about how many trials would likely certify a violation, when none was and the rates point to one."""
        claim = self.mechanism.claim
        if not isinstance(evidence, HeldOutCounts) or self.delta < claim.delta or lower.epsilon > claim.epsilon:
            return None
        e = evidence
        advice = trials_for_violation(e.false_positives, e.n0, e.false_negatives, e.n1, claim=claim.epsilon,
                                      delta=self.delta, beta=1.0 - self.bound.confidence)
        return None if advice is None else max(advice, trials)

    def in_rounds(self, budget: AutoBudget, seed: int, progress: Callable[[int], None] | None,
                  mode: str = AUTO) -> AuditResult:
        """Return the audit in rounds of `auto_trials`, the first sized to the time budget by a timing probe (or in
        the epochs of `sequential_trials` when `mode` is "sequential")."""
        if mode == SEQUENTIAL:
            return audit_sequentially(self, budget, progress)
        probe = np.random.default_rng(np.random.SeedSequence([seed, PROBE_KEY]))
        mech, d0, d1 = self.mechanism, self.d0, self.d1
        first = first_round(lambda n: (mech.sample(d0, n, probe), mech.sample(d1, n, probe)), budget.max_seconds)

        def run_round(trials: int, round_seed: int, round_confidence: float) -> AuditResult:
            audit = dataclasses.replace(self, bound=dataclasses.replace(self.bound, confidence=round_confidence))
            return audit.once(trials, round_seed, time.perf_counter(), global_streams(), progress)

        return audit_in_rounds(run_round, seed=seed, confidence=self.bound.confidence, epsilon=mech.claim.epsilon,
                               budget=budget, first=first)
