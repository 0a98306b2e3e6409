"""`trials="sequential"`: a two-dataset audit that looks at its bound as the draws come in and stops when it is decided.

The audit runs in epochs planned before any draw: FIRST_EPOCH trials per
dataset, then EPOCH_GROWTH times more each, and a last epoch with the rest of
the budget. Each epoch chooses its test on a selection sample of its own
(fresh draws, its own seed, as the fixed audit does), then draws held-out
outputs in chunks of growing size; after each chunk, confidence sequences
for the test's FPR and FNR (`dpaudit.audit.estimators.sequential`, beta-
binomial mixtures, their priors tuned on the selection sample) give an ε
lower bound that holds at every stopping time. Epoch k's sequences run at
its share of β, fixed in advance (FINAL_SHARE to the last epoch, the rest
split evenly over the others), and LAST_LOOK_SHARE goes to the one look
planned before any draw: the end of the last epoch's held-out draws, judged
by Clopper–Pearson as the fixed audit judges its own
(`dpaudit.audit.estimators.planned_look`, reported only once those draws
are complete). By the union bound every epoch's sequences hold at every
time and the planned look holds, all at once, with probability ≥ 1 − β, so
the largest bound of any epoch at any look is a lower bound at confidence
1 − β, whenever and however the audit stops: no draw both chooses a test
and certifies it, and looking costs nothing more. The last epoch chooses
its test for the planned look, which certifies at the full budget.

Stop rules, checked after every chunk: a violation is certified; the bound
reaches `tight` × the claimed ε; the budget of trials or seconds is spent
(and no epoch starts whose selection sample, drawn before its first look,
would outlast the seconds left at the rate seen so far);
or (`give_up`, in the last epoch) the claim is out of reach: even were the
rates at the lower ends of their sequences, neither their upper ends nor the
planned look at the end of the budget would certify the claimed ε. An
earlier epoch ends on the same rule for its own held-out draws and leaves
what it did not draw to the last epoch, whose test is chosen on the largest
sample. Ctrl-C returns the bound
so far (`Interrupted.partial`), valid as any stopping time is.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from dpaudit.attacks.held_out_counts import HeldOutCounts
from dpaudit.attacks.sampling import per_chunk
from dpaudit.attacks.selection_budget import split_budget
from dpaudit.attacks.two_dataset_play import Chosen, PlayedPair, Setting, choose, count_errors
from dpaudit.audit.audits.auto_trials import AutoBudget
from dpaudit.audit.estimators.intervals import TwoRates
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.planned_look import PlannedLook
from dpaudit.audit.estimators.projection import steering
from dpaudit.audit.estimators.sequential import TwoRatesSequence, fixed_level
from dpaudit.audit.results.phases import Epoch, SequentialEpochs
from dpaudit.audit.results.result import AuditResult, refutes
from dpaudit.errors import InvalidParameterError
from dpaudit.execution.interrupted import Interrupted
from dpaudit.execution.reproducibility import global_streams

if TYPE_CHECKING:
    from dpaudit.audit.audits.two_dataset import _Audit
    from dpaudit.audit.estimators.certify import Bound

__all__ = ["FINAL_SHARE", "FIRST_EPOCH", "LAST_LOOK_SHARE", "SEQUENTIAL", "audit_sequentially", "check_sequential",
           "epoch_shares", "grown_epochs", "look_sizes", "planned_epochs", "sequences_certify"]

SEQUENTIAL = "sequential"
FIRST_EPOCH = 1000
EPOCH_GROWTH = 4
FINAL_SHARE = 0.25
"""The last epoch's sequences' share of β."""
LAST_LOOK_SHARE = 0.5
"""The share of β of the look planned at the end of the budget (`planned_look`)."""
FIRST_LOOK = 32
LOOK_GROWTH = 1.5
METHOD = "beta-binomial mixture confidence sequences"
EPOCH_KEY = 0x5E9


def planned_epochs(max_trials: int) -> list[int]:
    """Return the epochs' trials per dataset: FIRST_EPOCH·4^k while the rest still exceeds 4 times the next, then the rest."""
    return grown_epochs(FIRST_EPOCH, max_trials)


def grown_epochs(first: int, budget: int) -> list[int]:
    """Return epochs of `first`·EPOCH_GROWTH^k while the rest of `budget` still exceeds EPOCH_GROWTH times the next, then the rest."""
    sizes: list[int] = []
    size = first
    while sum(sizes) + size + EPOCH_GROWTH * size <= budget:
        sizes.append(size)
        size *= EPOCH_GROWTH
    return sizes + [budget - sum(sizes)]


def epoch_shares(count: int) -> tuple[float, ...]:
    """Return each epoch's sequences' share of β: FINAL_SHARE to the last, the rest evenly to the others (a lone one
    has both); LAST_LOOK_SHARE, the planned look's, is not among them."""
    sequences = 1.0 - LAST_LOOK_SHARE
    if count == 1:
        return (sequences,)
    early = (sequences - FINAL_SHARE) / (count - 1)
    return (early,) * (count - 1) + (FINAL_SHARE,)


def look_sizes(held_out: int, elements: int) -> list[int]:
    """Return the chunk sizes of an epoch's held-out phase: FIRST_LOOK growing by LOOK_GROWTH, at most a memory chunk."""
    sizes: list[int] = []
    size, cap = float(FIRST_LOOK), per_chunk(elements)
    while sum(sizes) < held_out:
        sizes.append(int(min(size, cap, held_out - sum(sizes))))
        size *= LOOK_GROWTH
    return sizes


def epoch_seed(seed: int, k: int) -> int:
    """Return the seed of epoch `k`: independent streams for every epoch, apart from the rounds of `trials="auto"`."""
    return int(np.random.SeedSequence([seed, EPOCH_KEY, k]).generate_state(1)[0])


@dataclasses.dataclass
class _Epoch:
    """An epoch in progress: its setting, chosen test, sequences, the held-out counts so far and its best bound; the
    last one's planned look and, once its held-out draws are complete, the look's bound."""

    setting: Setting
    chosen: Chosen
    sequences: TwoRatesSequence
    counts: np.ndarray
    share: float
    look: PlannedLook | None = None
    looked: float | None = None
    epsilon: float = 0.0

    def add(self, counts: np.ndarray, delta: float) -> None:
        """Count a finished chunk's [d0 rejections, d1 rejections, d0 outputs, d1 outputs]; update the bound."""
        c = HeldOutCounts.from_rejections(counts)
        self.counts = self.counts + counts
        self.sequences = self.sequences.add(c.false_positives, c.n0, c.false_negatives, c.n1)
        self.epsilon = max(self.epsilon, self.sequences.epsilon(delta))

    def close(self, delta: float) -> None:
        """Take the planned look, if this epoch has one: its held-out draws are complete."""
        if self.look is not None:
            c = HeldOutCounts.from_rejections(self.counts)
            self.looked = self.look.epsilon(c.false_positives, c.n0, c.false_negatives, c.n1, delta)
            self.epsilon = max(self.epsilon, self.looked)

    def reachable(self, delta: float) -> float:
        """Return the most its sequences, or its planned look not yet taken, could certify were the rates at the
        sequences' lower ends (a rule for giving up)."""
        reach = self.sequences.reachable(self.chosen.held_out, delta)
        if self.look is not None and self.looked is None:
            reach = max(reach, self.look.reachable(self.sequences, delta))
        return reach

    @property
    def paid(self) -> float:
        """Return the share of β this epoch was paid: its sequences' and its planned look's."""
        return self.share + (0.0 if self.look is None else LAST_LOOK_SHARE)

    @property
    def held_out(self) -> int:
        """Return the held-out outputs per dataset drawn so far (the larger of the two Poisson totals)."""
        return int(max(self.counts[2], self.counts[3]))


def _start_epoch(audit: _Audit, trials: int, seed: int, share: float, progress: Any, last: bool) -> _Epoch:
    """Return a new epoch of `trials` per dataset: its test chosen on its selection sample, its sequences started (the
    last epoch's test chosen for its planned look, the others' for their sequences)."""
    beta = (1.0 - audit.bound.confidence) * share
    look_beta = (1.0 - audit.bound.confidence) * LAST_LOOK_SHARE
    level = look_beta if last else 2.0 * fixed_level(beta / 2.0)  # the test is chosen for the interval it will be judged by
    setting = Setting(audit.mechanism, audit.d0, audit.d1, trials, seed, steering(TwoRates(), audit.delta, level),
                      audit.execution.backend, progress, global_streams())
    chosen = choose(setting)
    if progress:
        progress(chosen.selection)
    m = max(chosen.selection, 1)
    guess = [(rate * m + 0.5) / (m + 1.0) for rate in (chosen.fpr, chosen.fnr)]
    sequences = TwoRatesSequence.start(beta, guess[0], guess[1], max(chosen.held_out, 1))
    look = PlannedLook(look_beta, chosen.held_out) if last else None
    return _Epoch(setting, chosen, sequences, np.zeros(4, dtype=np.int64), share, look)


class _Run:
    """The epochs of one sequential audit: what they drew, their bounds, and the stop rules."""

    def __init__(self, audit: _Audit, budget: AutoBudget, progress: Callable[[int], None] | None) -> None:
        self.audit, self.budget, self.progress = audit, budget, progress
        self.start, self.drawn, self.epochs = time.perf_counter(), 0, []
        self.stopped = "budget of trials"

    def lower_bound(self) -> LowerBound:
        """Return the largest bound of any epoch, with the counts of the epoch that gave it."""
        best = max(reversed(self.epochs), key=lambda e: e.epsilon)
        c = HeldOutCounts.from_rejections(best.counts)
        s = best.sequences
        details = {**c.facts(), "fpr_upper": s.fpr.upper, "fnr_upper": s.fnr.upper,
                   "held_out_share_of_beta": best.paid, "planned_look": best.looked}
        return LowerBound(epsilon=best.epsilon, confidence=self.audit.bound.confidence, method=METHOD, delta=self.audit.delta,
                          trials=self.drawn, fpr=c.fpr, fnr=c.fnr, details=details, estimator="held-out")

    def decided(self, epoch: _Epoch, last: bool) -> str | None:
        """Return why the audit stops after this look (None: go on); "epoch" when only this epoch ends."""
        claim, delta = self.audit.mechanism.claim, self.audit.delta
        bound = self.lower_bound()
        if refutes(bound, claim):
            return "violation certified"
        if bound.epsilon >= self.budget.tight * claim.epsilon:
            return f"bound within {self.budget.tight:g} of the claim"
        if self.budget.max_seconds is not None and time.perf_counter() - self.start > self.budget.max_seconds:
            return "budget of seconds"
        reach = epoch.reachable(delta)
        if reach <= claim.epsilon and (not last or self.budget.give_up):
            return "claim out of reach" if last else "epoch"
        return None

    def show(self, epsilon: float) -> None:
        """Show the running bound on the progress bar, when it can show one."""
        note = getattr(self.progress, "note", None)
        if callable(note):
            note(f"ε ≥ {epsilon:.4g}")

    def play_epoch(self, k: int, trials: int, share: float, last: bool) -> str | None:
        """Play epoch `k` until a stop rule fires or its draws are spent; return why the audit stops, or None."""
        epoch = _start_epoch(self.audit, trials, epoch_seed(self.audit.seed, k), share, self.progress, last)
        self.epochs.append(epoch)
        self.drawn += epoch.chosen.selection
        sizes = look_sizes(epoch.chosen.held_out, int(np.prod(epoch.chosen.shape, dtype=int)))
        for i, size in enumerate(sizes):
            try:
                counts = count_errors(epoch.setting, epoch.chosen, [size], i)
            except Interrupted as stop:
                if stop.partial is not None and stop.done:
                    epoch.add(np.asarray(stop.partial), self.audit.delta)
                    self.drawn += stop.done
                raise
            epoch.add(counts, self.audit.delta)
            if i == len(sizes) - 1:
                epoch.close(self.audit.delta)
            self.drawn += int(max(counts[2], counts[3]))
            self.show(max(e.epsilon for e in self.epochs))
            why = self.decided(epoch, last)
            if why is not None:
                return None if why == "epoch" else why
        return None

    def out_of_time(self, trials: int) -> bool:
        """Return True when the budget of seconds would end before an epoch of `trials` reached its first look: its
        selection sample and first chunk, drawn before any look, at the seconds per trial seen so far (a stop rule)."""
        if self.budget.max_seconds is None or self.drawn == 0:
            return False
        elapsed = time.perf_counter() - self.start
        ahead = split_budget(trials)[0] + FIRST_LOOK
        return elapsed + elapsed / self.drawn * ahead > self.budget.max_seconds

    def run(self) -> None:
        """Play the planned epochs until a stop rule fires; the last epoch gets every trial the others left (a budget
        under FIRST_EPOCH is one epoch of the budget); no epoch starts that the budget of seconds would end before its
        first look."""
        sizes = planned_epochs(self.budget.max_trials)
        shares = epoch_shares(len(sizes))
        for k, size in enumerate(sizes):
            last = k == len(sizes) - 1
            trials = max(self.budget.max_trials - self.drawn, min(FIRST_EPOCH, self.budget.max_trials)) if last else size
            if self.out_of_time(trials):
                self.stopped = "budget of seconds"
                return
            why = self.play_epoch(k, trials, shares[k], last)
            if why is not None:
                self.stopped = why
                return

    def result(self, interrupted: bool = False) -> AuditResult:
        """Return the result: the best epoch's test and counts, the bound of all epochs, what each epoch did."""
        best = max(reversed(self.epochs), key=lambda e: e.epsilon)
        c = HeldOutCounts.from_rejections(best.counts)
        played = PlayedPair(c, best.chosen.test.describe(), best.chosen.selection, best.held_out, best.chosen.screening,
                        interrupted, best.chosen.warning)
        first = self.audit.result(played, self.drawn, self.audit.seed, self.start)
        listed = tuple(Epoch(e.chosen.selection, e.held_out, e.setting.seed, e.epsilon,
                             1.0 - (1.0 - self.audit.bound.confidence) * e.paid, e.chosen.test.describe(), e.looked)
                       for e in self.epochs)
        b = self.budget
        sequential = SequentialEpochs(listed, "interrupted" if interrupted else self.stopped, b.max_trials,
                                      b.max_seconds, b.tight, b.give_up, self.audit.default)
        phases = dataclasses.replace(first.phases, sequential=sequential, trials_for_violation=None)
        return dataclasses.replace(first, lower_bound=self.lower_bound(), beside=(), evidence=None, phases=phases,
                                   seconds=time.perf_counter() - self.start)


def sequences_certify(bound: Bound) -> bool:
    """Return True when `bound` is the two-rates interval of held-out counts, the only one sequences certify."""
    return isinstance(bound.interval(), TwoRates) and bound.estimator in (None, "held-out")


def check_sequential(bound: Bound) -> None:
    """Raise the one sentence when `bound` is not the two-rates interval of held-out counts, the only one sequences certify."""
    interval = bound.interval()
    if not sequences_certify(bound):
        raise InvalidParameterError(
            f"trials='sequential' certifies the two-rates interval with its own estimator; got the {interval.name} "
            f"interval{'' if bound.estimator is None else ' and the estimator ' + repr(bound.estimator)}."
        )


def audit_sequentially(audit: _Audit, budget: AutoBudget, progress: Callable[[int], None] | None) -> AuditResult:
    """Return the sequential audit's result (module docstring): its bound holds at confidence 1 − β whenever it stopped.

    `phases.sequential` lists the epochs (selection and held-out trials,
    seed, bound, the confidence each was paid) and why they stopped.

    Raises:
        InvalidParameterError: for another interval than two rates.
        Interrupted: on Ctrl-C, with the result so far as `partial` (None before the first held-out chunk).
    """
    check_sequential(audit.bound)
    run = _Run(audit, budget, progress)
    try:
        run.run()
    except KeyboardInterrupt:
        partial = run.result(interrupted=True) if any(e.held_out for e in run.epochs) else None
        raise Interrupted(partial, done=run.drawn, total=budget.max_trials) from None
    return run.result()
