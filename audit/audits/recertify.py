"""`recertify`: certify the evidence an audit kept under another `Bound`, without playing its game again."""

from __future__ import annotations

import dataclasses

from dpaudit.attacks.games import TwoDataset
from dpaudit.attacks.held_out_counts import HeldOutCounts
from dpaudit.attacks.output_histogram import OutputHistogram
from dpaudit.audit.audits.membership import seed_streams
from dpaudit.audit.estimators.certify import Bound, certify
from dpaudit.audit.estimators.intervals import Bands, RatioInterval
from dpaudit.audit.results.result import AuditResult, MembershipResult, Result
from dpaudit.audit.theory.upper_bound import UpperBound
from dpaudit.errors import InvalidParameterError

__all__ = ["recertify"]


def recertify(result: Result, bound: Bound) -> Result:
    """Return `result` with its kept evidence certified under `bound` (another confidence, δ, estimator or strategy).

    Sound as `certify` is for that evidence, since nothing about the bound
    was used to play the game, with two exceptions that are refused: the
    bands interval needs the histogram of every output (a held-out game
    kept only its counts), and the ratio interval needs the direction a
    held-out game fixed on its selection split. A membership result is
    certified from the estimator stream of its seed, so the same bound gives
    the same result; a ladder of canaries keeps only the arm that certified.
    The theory upper bound is kept when δ is unchanged; at another δ it is
    not recomputed (the mechanism is not kept) and reads ∞.

    Raises:
        InvalidParameterError: for a result without evidence, or a bound its evidence cannot answer.
    """
    if not isinstance(bound, Bound):
        raise InvalidParameterError(f"recertify needs a Bound; got {type(bound).__name__}.")
    if isinstance(result, AuditResult) and result.evidence is not None:
        return _two_dataset(result, bound)
    if isinstance(result, MembershipResult) and result.observations is not None and result.game_spec is not None:
        return _membership(result, bound)
    raise InvalidParameterError("recertify needs a result that kept its evidence (the result of an audit of this version).")


def _delta(result: Result, bound: Bound) -> float:
    return bound.delta_for(None if result.claim is None else result.claim.delta)


def _upper(result: Result, delta: float) -> UpperBound | None:
    old = result.upper_bound
    return old if old is None or old.delta == delta else UpperBound(float("inf"), delta, "not recomputed")


def _two_dataset(result: AuditResult, bound: Bound) -> AuditResult:
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
    gaussian = Bound(estimator="gdp", confidence=bound.confidence, strategy=bound.strategy)
    secondary = () if delta == 0.0 else (certify(evidence, game, gaussian, delta=delta, rng=seed_streams(result.seed)[2]),)
    phases = None if result.phases is None else dataclasses.replace(result.phases, interval=interval.name,
                                                                     trials_for_violation=None)
    return dataclasses.replace(result, lower_bound=lower, secondary=secondary, bound=bound, phases=phases,
                               upper_bound=_upper(result, delta))


def _membership(result: MembershipResult, bound: Bound) -> MembershipResult:
    delta = _delta(result, bound)
    lower = certify(result.observations, result.game_spec, bound, delta=delta, rng=seed_streams(result.seed)[2])
    return dataclasses.replace(result, lower_bound=lower, bound=bound, upper_bound=_upper(result, delta))
