"""`MultiRun(runs, sequential=True)`: a multi-run membership game that looks at its bound as runs come in and stops when decided.

The runs are played in epochs planned before any run: FIRST_EPOCH runs
(fewer for a budget under 500), then EPOCH_GROWTH times more each, and a last epoch with the rest of the
budget. Each epoch plays SELECTION of its runs first and fixes a threshold
test on them alone (`sequential_threshold.choose_test`: direction and
threshold), then plays the rest in batches of growing size; after each
batch, confidence sequences for the test's FPR (on the OUT runs) and FNR
(on the IN runs) (`estimators.sequential.TwoRatesSequence`, beta-binomial
mixtures) give an ε lower bound that holds at every stopping time. Epoch
k's sequences run at its share of β fixed in advance (FINAL_SHARE to the
last epoch, the rest evenly over the others), and LAST_LOOK_SHARE goes to
the one look planned before any run: once all `runs` are played, every run
(selection runs included) is certified by the fixed game's own estimator,
as `MultiRun(runs)` would certify them (`planned_look` says why this is
sound: the look is taken only on the complete planned sample). By the union
bound all hold at once with probability ≥ 1 − β, so the largest bound of any
epoch at any look, and of the planned look, is a lower bound at confidence
1 − β however the game stops. No run both chooses a test and certifies it
in a sequence, and looking costs nothing more.

Stop rules, after every batch: a violation of the claim is certified; the
claim is out of reach (even were the rates at the lower ends of their
sequences, neither the epoch's planned runs nor, in the last epoch, the
planned look at half of all runs per class would certify it: the last
epoch stops the game unless `give_up` is False, an earlier one leaves its
runs to the last); or the
budget of runs is spent. Ctrl-C raises `Interrupted` with the result so
far as `partial`, valid as any stopping time is.

Runs are played by `play(start, count)`, which returns the scores and
membership of runs start … start + count − 1; each game decides a run's
membership before the run and independently of every score.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Callable

import numpy as np
from dpaudit.attacks.games import MultiRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.membership import bound_beside
from dpaudit.audit.audits.sequential_trials import EPOCH_GROWTH, LAST_LOOK_SHARE, epoch_shares, grown_epochs
from dpaudit.audit.audits.subject import Subject
from dpaudit.audit.estimators.certify import Bound, certify, certify_best
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.planned_look import PlannedLook
from dpaudit.audit.estimators.sequential import TwoRatesSequence
from dpaudit.audit.estimators.sequential_threshold import FixedTest, choose_test
from dpaudit.audit.results.result import MembershipResult, refutes
from dpaudit.errors import InvalidParameterError
from dpaudit.execution.execution import Execution
from dpaudit.execution.interrupted import Interrupted
from dpaudit.execution.progress import progress_of
from dpaudit.execution.run_store import RunStore
from dpaudit.execution.runs import one_client

__all__ = ["FIRST_EPOCH", "METHOD", "check_sequential_bound", "planned_epochs", "play_sequentially",
           "sequences_certify_runs"]

FIRST_EPOCH = 100
SMALLEST_EPOCH = 40
SELECTION = 0.25
FIRST_LOOK = 16
LOOK_GROWTH = 1.5
METHOD = "beta-binomial mixture confidence sequences"
LOOK_KEY = 0x100C

Play = Callable[[int, int], "Observations | tuple[Observations, ...]"]
"""`play(start, count)`: the scores and truth of runs start … start + count − 1 (one `Observations` per arm of a ladder)."""
Arms = Callable[[Observations], "tuple[Observations, ...]"]
"""How the fixed game certifies a game's scores as arms (e.g. `canary.both_directions`), for the planned look."""


def planned_epochs(max_runs: int) -> list[int]:
    """Return the epochs' runs: f·4^k while the rest still exceeds 4 times the next, then the rest.

    f is FIRST_EPOCH, or a fifth of a smaller budget (at least SMALLEST_EPOCH),
    so that a budget of a few hundred training runs still looks early.
    """
    return grown_epochs(min(FIRST_EPOCH, max(max_runs // (EPOCH_GROWTH + 1), SMALLEST_EPOCH)), max_runs)


def look_sizes(runs: int) -> list[int]:
    """Return the batches of an epoch's judged runs: FIRST_LOOK growing by LOOK_GROWTH, none under FIRST_LOOK but a lone one."""
    sizes: list[int] = []
    size = float(FIRST_LOOK)
    while sum(sizes) < runs:
        rest = runs - sum(sizes)
        sizes.append(rest if rest < int(size) + FIRST_LOOK else int(size))
        size *= LOOK_GROWTH
    return sizes


def sequences_certify_runs(bound: Bound) -> bool:
    """Return True when `bound` leaves the estimator and strategy to the sequential game (its own), which certifies it."""
    return bound.estimator in (None, "threshold") and bound.strategy is None


def check_sequential_bound(bound: Bound) -> None:
    """Raise the one sentence unless `bound` leaves the estimator and strategy to the sequential game (its own)."""
    if not sequences_certify_runs(bound):
        raise InvalidParameterError(
            "A sequential multi-run game certifies its runs by confidence sequences of one threshold test of its own; "
            "drop the estimator and the strategy, or play a fixed number of runs."
        )


@dataclasses.dataclass
class _Epoch:
    """An epoch in progress: its test, sequences, share of β, runs that chose and judged it, error counts and best bound."""

    test: FixedTest
    sequences: TwoRatesSequence
    share: float
    selection: int
    planned: int
    counts: tuple[int, int, int, int] = (0, 0, 0, 0)
    epsilon: float = 0.0

    def add(self, obs: Observations | tuple[Observations, ...], delta: float) -> None:
        """Count a batch of judged runs at the fixed test; update the sequences and the epoch's best bound."""
        fp, n0, fn, n1 = self.test.errors(obs)
        self.counts = tuple(a + b for a, b in zip(self.counts, (fp, n0, fn, n1)))  # type: ignore[assignment]
        self.sequences = self.sequences.add(fp, n0, fn, n1)
        self.epsilon = max(self.epsilon, self.sequences.epsilon(delta))

    @property
    def judged(self) -> int:
        """Return the runs judged so far."""
        return self.counts[1] + self.counts[3]

    def record(self) -> dict[str, Any]:
        """Return the epoch for the JSON: its runs, test, bound and the confidence it was paid."""
        return {"selection_runs": self.selection, "judged_runs": self.judged, "test": self.test.describe(),
                "epsilon": self.epsilon, "confidence": 1.0 - self.sequences.fpr.alpha * 2.0}


def _joined(batches: list[Observations | tuple[Observations, ...]]) -> Observations | tuple[Observations, ...]:
    """Return the batches' runs as one sample (one per arm of a ladder), in the order they were played."""
    def join(parts: list[Observations]) -> Observations:
        return Observations(scores=np.concatenate([o.scores for o in parts]), truth=np.concatenate([o.truth for o in parts]))

    if isinstance(batches[0], tuple):
        return tuple(join([b[arm] for b in batches]) for arm in range(len(batches[0])))  # type: ignore[index]
    return join(batches)  # type: ignore[arg-type]


@dataclasses.dataclass
class _AllRuns:
    """Every run played, kept for the look planned at the full budget (`bound` at its share of β), and its bound."""

    game: MultiRun
    bound: Bound
    delta: float
    seed: int
    arms: Arms | None = None
    batches: list[Observations | tuple[Observations, ...]] = dataclasses.field(default_factory=list)
    looked: LowerBound | None = None
    runs: Observations | tuple[Observations, ...] | None = None
    """Every run, as the fixed game certifies them, once the look is taken."""

    @property
    def fixed(self) -> MultiRun:
        """Return the fixed game of the same runs, `MultiRun(runs)`."""
        return dataclasses.replace(self.game, sequential=False)

    def take(self) -> None:
        """Certify every run as the fixed game `MultiRun(runs)` would (sound only once all its runs are played)."""
        runs, fixed = _joined(self.batches), self.fixed
        if self.arms is not None and isinstance(runs, Observations):
            runs = self.arms(runs)
        self.runs = runs
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, LOOK_KEY]))
        if isinstance(runs, tuple):
            looked = certify_best(runs, fixed, self.bound, delta=self.delta, rng=rng)[1]
            named = "both directions" if self.arms is not None else f"best of {len(runs)} canaries"
            self.looked = dataclasses.replace(looked, method=looked.method.replace(f"best of {len(runs)} canaries", named))
        else:
            self.looked = certify(runs, fixed, self.bound, delta=self.delta, rng=rng)


class _Game:
    """The epochs of one sequential game: the runs played, the bounds, and the stop rules."""

    def __init__(self, play: Play, game: MultiRun, bound: Bound, delta: float, subject: Subject, bar: Any,
                 seed: int, arms: Arms | None) -> None:
        self.play, self.max_runs, self.give_up = play, game.runs, game.give_up
        self.beta, self.delta, self.subject = 1.0 - bound.confidence, delta, subject
        self.bar, self.drawn, self.epochs, self.stopped = bar, 0, [], "budget of runs"
        look = dataclasses.replace(bound, confidence=1.0 - self.beta * LAST_LOOK_SHARE)
        self.all_runs = _AllRuns(game, look, delta, seed, arms)

    def _runs(self, count: int) -> Observations | tuple[Observations, ...]:
        """Return the next `count` runs' scores and truth, counting and keeping them; take the planned look after the
        last of the budget."""
        obs = self.play(self.drawn, count)
        self.drawn += count
        self.all_runs.batches.append(obs)
        if self.drawn == self.max_runs:
            self.all_runs.take()
        if self.bar:
            self.bar(count)
        return obs

    def best(self) -> _Epoch:
        """Return the epoch of the largest bound (the latest of equal ones)."""
        return max(reversed(self.epochs), key=lambda e: e.epsilon)

    def _start(self, size: int, share: float) -> _Epoch:
        """Return a new epoch of `size` runs: its test chosen on its first SELECTION runs, its sequences started."""
        selection = max(math.ceil(SELECTION * size), 2)
        judged = max(size - selection, 1)
        beta = self.beta * share
        test = choose_test(self._runs(selection), judged, beta, self.delta)
        sequences = TwoRatesSequence.start(beta, test.fpr_guess, test.fnr_guess, max(judged // 2, 1))
        epoch = _Epoch(test, sequences, share, selection, judged)
        self.epochs.append(epoch)
        return epoch

    def _decided(self, epoch: _Epoch, last: bool) -> str | None:
        """Return why the game stops after this look (None: go on); "epoch" when only this epoch ends."""
        claim = self.subject.claim
        if claim is None:
            return None
        if refutes(self.lower_bound(), claim):
            return "violation certified"
        reach = epoch.sequences.reachable(max(epoch.planned // 2, 1), self.delta)
        if last and self.all_runs.looked is None:
            look = PlannedLook(self.beta * LAST_LOOK_SHARE, max(self.max_runs // 2, 1))
            reach = max(reach, look.reachable(epoch.sequences, self.delta))
        if (self.give_up or not last) and reach <= claim.epsilon:
            return "claim out of reach" if last else "epoch"
        return None

    def _epoch(self, size: int, share: float, last: bool) -> str | None:
        """Play one epoch until a stop rule fires or its runs are spent; return why the game stops, or None."""
        epoch = self._start(size, share)
        for count in look_sizes(epoch.planned):
            epoch.add(self._runs(count), self.delta)
            note = getattr(self.bar, "note", None)
            if callable(note):
                note(f"ε ≥ {max(e.epsilon for e in self.epochs):.4g}")
            why = self._decided(epoch, last)
            if why is not None:
                return None if why == "epoch" else why
        return None

    def run(self) -> None:
        """Play the planned epochs until a stop rule fires; the last epoch gets every run the others left."""
        sizes = planned_epochs(self.max_runs)
        shares = epoch_shares(len(sizes))
        for k, size in enumerate(sizes):
            last = k == len(sizes) - 1
            why = self._epoch(self.max_runs - self.drawn if last else size, shares[k], last)
            if why is not None:
                self.stopped = why
                return

    def lower_bound(self) -> LowerBound:
        """Return the largest bound of any epoch at any look, with the counts of the epoch that gave it, or the planned
        look's when it is larger."""
        looked = self.all_runs.looked
        sequences = self._sequences_bound()
        if looked is None or looked.epsilon <= sequences.epsilon:
            return sequences
        method = f"{looked.method}; the look planned at all {self.max_runs:,} runs, at {LAST_LOOK_SHARE:g} of β"
        return dataclasses.replace(looked, confidence=1.0 - self.beta, method=method, trials=self.drawn,
                                   details={**looked.details, "planned_look": True})

    def _sequences_bound(self) -> LowerBound:
        """Return the largest bound of any epoch's sequences at any look, with the counts of the epoch that gave it."""
        best = self.best()
        fp, n0, fn, n1 = best.counts
        s = best.sequences
        details = {"test": best.test.describe(), "direction": best.test.direction, "arm": best.test.arm, "false_positives": fp,
                   "out_runs": n0, "false_negatives": fn, "in_runs": n1, "fpr_upper": s.fpr.upper,
                   "fnr_upper": s.fnr.upper, "epoch_share_of_beta": best.share}
        return LowerBound(epsilon=best.epsilon, confidence=1.0 - self.beta, method=METHOD, delta=self.delta,
                          trials=self.drawn, fpr=fp / n0 if n0 else None, fnr=fn / n1 if n1 else None, details=details,
                          guesses=n0 + n1, correct=n0 + n1 - fp - fn, test=best.test.describe())

    def sequential(self, interrupted: bool) -> dict[str, Any]:
        """Return the JSON `sequential` object: the epochs, the runs played, the budget and why the game stopped."""
        return {"epochs": [e.record() for e in self.epochs], "runs_drawn": self.drawn, "max_runs": self.max_runs,
                "stopped": "interrupted" if interrupted else self.stopped}


def play_sequentially(*, owner: str, game: MultiRun, bound: Bound, seed: int, subject: Subject, play: Play,
                      scorer: Callable[[], str], attack: dict[str, Any], execution: Execution = Execution(),
                      store: RunStore | None = None, arms: Arms | None = None,
                      beside: str | None = None) -> MembershipResult:
    """Return the sequential game's result (module docstring): its bound holds at confidence 1 − β whenever it stopped.

    `play(start, count)` plays runs start … start + count − 1 (on Dask,
    every batch on the one client `execution` opens for the game:
    `runs.one_client`); `scorer()` names the score once runs are played;
    `arms`, how the fixed game certifies the scores (e.g. both directions),
    shapes the planned look at the full budget; `beside`, an estimator under
    an assumption reported next to it once taken, as the fixed game reports
    it (`membership.bound_beside`; never the verdict);
    `store`, the run store that keeps the runs, also gets the result's JSON. The result
    keeps no scores to certify again (`observations` is None): a bound on
    runs whose number depended on them would not be a fixed-sample bound.

    Raises:
        InvalidParameterError: an estimator or strategy of the fixed game.
        Interrupted: on Ctrl-C, with the result so far as `partial` (None before the first judged batch).
    """
    check_sequential_bound(bound)
    delta = bound.delta_for(None if subject.claim is None else subject.claim.delta)
    start = time.perf_counter()

    def result(g: _Game, interrupted: bool = False) -> MembershipResult:
        lower = g.lower_bound()
        assumed, projected = None, None
        if g.all_runs.runs is not None:
            rng = np.random.default_rng(np.random.SeedSequence([seed, LOOK_KEY, 1]))
            assumed, projected = bound_beside(beside, g.all_runs.runs, g.all_runs.fixed, bound, lower, delta, rng,
                                              subject.claim)
        lower = dataclasses.replace(lower, details={**lower.details, "sequential": g.sequential(interrupted)})
        return MembershipResult(
            game=game.name, lower_bound=lower, scorer=scorer(), seconds=time.perf_counter() - start, seed=seed,
            mechanism=subject.name, params=dict(subject.params), claim=subject.claim,
            upper_bound=subject.upper_bound(delta), observations=None, game_spec=game, bound=bound,
            attack={**attack, "runs_played": f"{g.drawn:,} of at most {g.max_runs:,}",
                    "stopped": "interrupted" if interrupted else g.stopped},
            beside=assumed, projected_runs=projected,
        )

    with progress_of(execution.progress, game.runs, label="runs") as bar, one_client(execution.backend):
        g = _Game(play, game, bound, delta, subject, bar, seed, arms)
        try:
            g.run()
        except KeyboardInterrupt:
            partial = result(g, interrupted=True) if any(e.judged for e in g.epochs) else None
            raise Interrupted(partial, done=g.drawn, total=game.runs, store=store.path if store else None) from None
    final = result(g)
    if store:
        store.write_result(final.to_dict())
    return final
