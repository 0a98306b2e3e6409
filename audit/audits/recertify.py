"""`recertify`: certify the evidence an audit kept under another `Bound`, without playing its game again.

An audit whose result won a selection made on evidence (the best round of
`trials="auto"`, the best arm of a ladder of canaries) paid for it with a
β split; certifying the winner again alone, at all of β, would not (the
largest of K bounds is above the truth more often than β: issue 47 found
29 of 200 seeds of an exactly tight 5-DP discrete Laplace flagged that way
under `trials="auto"` at 95 %).
So `recertify` certifies every candidate the selection compared (the
result keeps them, `Selection`) at its share of β and keeps the best, the
rule the audit used: the same `Bound` gives the same bound. The choices
that are paid for by fresh draws need nothing more: the pair of a pair
search and the dataset and arm of DP-SGD's `dataset="auto"` are chosen on
draws of their own, so the game they choose is certified at all of β. A
replay's certificates (`audit_replay`) are certified again each at the
share of β it was paid, and the largest kept, as the audit did.
"""

from __future__ import annotations

import dataclasses

from dpaudit.attacks.games import TwoDataset
from dpaudit.attacks.held_out_counts import HeldOutCounts
from dpaudit.attacks.output_histogram import OutputHistogram
from dpaudit.audit.audits.auto_trials import combine_rounds
from dpaudit.audit.audits.membership import certify_at_share, seed_streams
from dpaudit.audit.audits.replay import combined
from dpaudit.audit.estimators.certify import Bound, bounds_beside, certify, certify_best
from dpaudit.audit.estimators.intervals import Bands, RatioInterval
from dpaudit.audit.results.provenance import Recertified
from dpaudit.audit.results.replay_result import ReplayResult
from dpaudit.audit.results.result import AuditResult, MembershipResult, Result
from dpaudit.audit.theory.upper_bound import UpperBound
from dpaudit.errors import InvalidParameterError

__all__ = ["recertify"]


def recertify(result: Result, bound: Bound) -> Result:
    """Return `result` with its kept evidence certified under `bound` (another confidence, δ, estimator or strategy).

    Sound as `certify` is for that evidence, since nothing about the bound
    was used to play the game. A result that won a selection (the best round
    of `trials="auto"`, the best arm of a ladder) is certified as the audit
    certified it: every round or arm at its share of β, the largest kept;
    one whose selection was not kept is refused. A replay's result
    (`audit_replay`) has each of its certificates certified again at the
    share of β it was paid, the largest kept. Refused too: the bands
    interval on a held-out game (it needs the histogram of every output),
    and the ratio interval unless the game fixed its direction on its
    selection split. A membership result is certified from the estimator
    stream of its seed, so the same bound gives the same result. The theory
    upper bound is kept when δ is unchanged; at another δ it is not
    recomputed (the mechanism is not kept) and reads ∞. The result's
    `recertified` says under which bound it was first certified, and what
    that gave.

    Trying several bounds on one result and keeping the best is a selection
    of its own, which this function cannot see: split β over them
    (`BestOf` does, for threshold strategies).

    Raises:
        InvalidParameterError: for a result without evidence, a selection not kept, or a bound its evidence cannot answer.
    """
    if not isinstance(bound, Bound):
        raise InvalidParameterError(f"recertify needs a Bound; got {type(bound).__name__}.")
    if _is_sequential(result):
        raise InvalidParameterError("A sequential result (trials or runs 'sequential') holds at every stopping time only"
                                    " under the confidence sequences it was played with; audit again under the other bound"
                                    " instead.")
    if isinstance(result, ReplayResult):
        again = _replayed(result, bound)
    elif isinstance(result, AuditResult) and result.evidence is not None:
        again: Result = _rounds(result, bound) if _is_auto(result) else _two_dataset(result, bound)
    elif isinstance(result, MembershipResult) and result.observations is not None and result.game_spec is not None:
        again = _membership(result, bound)
    else:
        raise InvalidParameterError("recertify needs a result that kept its evidence (the result of an audit of this version).")
    first = result.recertified or Recertified(result.bound, result.lower_bound)
    return dataclasses.replace(again, recertified=first)


def _delta(result: Result, bound: Bound) -> float:
    return bound.delta_for(None if result.claim is None else result.claim.delta)


def _upper(result: Result, delta: float) -> UpperBound | None:
    old = result.upper_bound
    return old if old is None or old.delta == delta else UpperBound(float("inf"), delta, "not recomputed")


def _is_sequential(result: Result) -> bool:
    """Return whether `result` comes from a sequential game (two-dataset trials or membership runs)."""
    if isinstance(result, AuditResult):
        return result.phases is not None and result.phases.sequential is not None
    return isinstance(result, MembershipResult) and bool(getattr(result.game_spec, "sequential", False))


def _is_auto(result: AuditResult) -> bool:
    """Return True for the result of `trials="auto"`; raise when it did not keep the rounds it chose among."""
    if result.phases is None or result.phases.auto is None:
        return False
    if result.selection is None:
        raise InvalidParameterError(
            "This result of trials='auto' kept only its best round, and certifying that round alone at all of β would "
            "not pay for choosing it; audit again with this version, which keeps every round."
        )
    return True


def _rounds(result: AuditResult, bound: Bound) -> AuditResult:
    """Return the result of `trials="auto"` certified again: every round at its share of β, the largest bound kept."""
    selection = result.selection
    rounds = [_two_dataset(r, dataclasses.replace(bound, confidence=selection.confidence_of(k, bound.confidence)))
              for k, r in enumerate(selection.candidates)]
    combined = combine_rounds(rounds, selection.shares, confidence=bound.confidence, auto=result.phases.auto)
    return dataclasses.replace(combined, seed=result.seed, seconds=result.seconds, bound=bound)


def _replayed(result: ReplayResult, bound: Bound) -> ReplayResult:
    """Return a replay's result certified again: each certificate at its share of β, the largest kept (`combined`)."""
    report = result.replay
    again = tuple(dataclasses.replace(c, result=_two_dataset(c.result, dataclasses.replace(
        bound, confidence=1.0 - (1.0 - bound.confidence) * c.share))) for c in report.certified)
    return combined(dataclasses.replace(report, certified=again), bound, result.seed, result.seconds)


def _two_dataset(result: AuditResult, bound: Bound) -> AuditResult:
    """Return one played two-dataset game's evidence certified under `bound` (at all of `bound`'s β)."""
    evidence, interval = result.evidence, bound.interval()
    if isinstance(evidence, HeldOutCounts):
        if isinstance(interval, Bands):
            raise InvalidParameterError("The bands interval needs every output counted; this audit kept held-out counts.")
        if isinstance(interval, RatioInterval) != (evidence.direction is not None):
            raise InvalidParameterError(
                "The ratio interval certifies the direction an audit fixed on its selection split; re-run the audit with "
                "interval='ratio' (or recertify a ratio audit with it)."
            )
    elif isinstance(evidence, OutputHistogram) and not isinstance(interval, Bands):
        raise InvalidParameterError("This audit counted every output; recertify it with Bound(strategy=Bands()).")
    delta = _delta(result, bound)
    game = TwoDataset(max(result.lower_bound.trials, 10))
    lower = certify(evidence, game, bound, delta=delta, rng=seed_streams(result.seed)[2])
    lower = dataclasses.replace(lower, trials=result.lower_bound.trials)
    beside = bounds_beside(evidence, game, bound, delta=delta, rng=seed_streams(result.seed)[2])
    phases = None if result.phases is None else dataclasses.replace(result.phases, interval=interval.name,
                                                                     trials_for_violation=None)
    return dataclasses.replace(result, lower_bound=lower, beside=beside, bound=bound, phases=phases,
                               upper_bound=_upper(result, delta))


def _membership(result: MembershipResult, bound: Bound) -> MembershipResult:
    """Return a membership result certified under `bound`: a ladder's every arm at β/K, the best kept, as the audit did."""
    delta, selection, rng = _delta(result, bound), result.selection, seed_streams(result.seed)[2]
    if selection is None and "best_canary" in result.attack:
        raise InvalidParameterError(
            "This result kept only the best canary of its ladder, and certifying it alone at all of β would not pay for "
            "choosing it; audit again with this version, which keeps every canary."
        )
    if selection is None:
        lower = certify_at_share(result.observations, result.game_spec, bound, delta, rng)
        return dataclasses.replace(result, lower_bound=lower, bound=bound, upper_bound=_upper(result, delta))
    best, lower = certify_best(selection.candidates, result.game_spec, bound, delta=delta, rng=rng)
    return dataclasses.replace(result, lower_bound=lower, bound=bound, upper_bound=_upper(result, delta),
                               observations=selection.candidates[best], attack={**result.attack, "best_canary": best},
                               selection=dataclasses.replace(selection, kept=best))
