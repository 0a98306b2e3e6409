"""`audit_replay`: replay a mechanism's random draws on neighbours, then certify what the replay found on fresh draws.

The same path as every audit, with a screening in front: candidate pairs
(the one given, the default pair, or with `search` the bug hunter's
neighbours) are replayed at two runs each (`dpaudit.attacks.replay`); the
pairs with a divergence or a data-derived shape, then those of largest
implied ε, are kept (at most `certify`, at least one); each is certified by
`audit_mechanism` on fresh draws at β/k, its test aimed where the replay
showed the move (a fixed post-processing of the release, chosen on the
replay's draws, which the certificate never reuses); the result is the
certificate of largest bound, at the confidence of all of them together
(union bound), with the findings in `replay`. A finding never decides the
verdict: it follows the certificate only.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Iterable

import numpy as np
from dpaudit.attacks.replay.aim import aimed
from dpaudit.attacks.replay.candidates import Candidate, candidates, screen
from dpaudit.attacks.replay.findings import Sensitivity
from dpaudit.attacks.replay.replay_pair import Replay
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.estimators.certify import Bound
from dpaudit.audit.estimators.intervals import TwoRates
from dpaudit.audit.results.provenance import Selection
from dpaudit.audit.results.replay_result import Certified, ReplayReport, ReplayResult
from dpaudit.audit.theory.profiles import gdp_epsilon
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.execution.execution import Execution
from dpaudit.mechanisms.base import Mechanism, check_pair
from dpaudit.validation import check_delta, check_int, check_probability_open

__all__ = ["REPLAYED", "audit_replay", "combined", "implied_epsilon"]

REPLAY_KEY = 0x5E91
"""The replays draw from SeedSequence([seed, REPLAY_KEY]), apart from every stream of the certificates."""
REPLAYED = "pairs a replay flagged"
DEFAULT_TRIALS = 20_000
"""Outputs per dataset of each certificate: with at most 3 certificates, a tenth of `audit_mechanism`'s default or less."""


def implied_epsilon(found: Sensitivity | None, delta: float) -> float | None:
    """Return the ε that the recorded noise gives the move a replay saw at δ (0 when nothing moved): a reading, not a bound.

    Pure laws add up (Σ|Δ|/scale); the Gaussian draws' √Σ(Δ/σ)² is μ-GDP,
    whose exact ε(δ) (`gdp_epsilon`) is added to them (basic composition).
    None ("not priced") when part of the move has no law to read it by
    (`Sensitivity.unpriced`: uniforms a library transforms, a law with no
    closed form here): a sum of the priced part would claim an ε the
    record cannot justify.
    """
    if found is None:
        return 0.0
    if found.unpriced:
        return None
    if found.gaussian_mu == 0.0:
        return found.pure_epsilon
    if not math.isfinite(found.gaussian_mu):
        return math.inf
    return found.pure_epsilon + gdp_epsilon(delta=delta, mu=found.gaussian_mu)


def _rank(replay: Replay, claim: float, delta: float) -> tuple[int, int, float]:
    """Return the order of a replay among the candidates: structural findings first, then a priced ε above the claim,
    then a move that is not priced, then by implied ε (a flagged pair is one of the first three)."""
    structural = bool(replay.divergences()) or replay.shape() is not None
    implied = implied_epsilon(replay.sensitivity(), delta)
    return int(structural), 2 if implied is not None and implied > claim else int(implied is None), implied or 0.0


def _chosen(replays: list[Replay], claim: float, delta: float, certify: int) -> tuple[list[int], int]:
    """Return the indices of the replays to certify (flagged ones by rank, else the top one), and how many were flagged."""
    ranks = [_rank(r, claim, delta) for r in replays]
    order = sorted(range(len(replays)), key=lambda i: tuple(-x for x in ranks[i]) + (i,))
    flagged = [i for i in order if ranks[i][0] or ranks[i][1]]
    return (flagged or order)[:certify], len(flagged)


def runs_spent(screened: list[tuple[Candidate, Replay]], pairs: int) -> int:
    """Return the mechanism's runs the screening spent: each replay's, one for each pair that raised on its D, and the
    replay of the first pair's D on itself."""
    return sum(r.runs for _, r in screened) + pairs - len(screened) + 1


def _bound(bound: Bound | None, confidence: float, delta: float | None) -> Bound:
    """Return the `Bound` of the audit: the one given, or the one its shorthands say."""
    if bound is None:
        return Bound(confidence=check_probability_open(confidence, "confidence", "audit_replay"),
                     delta=None if delta is None else check_delta(delta, "delta", "audit_replay"), strategy=TwoRates())
    if not isinstance(bound, Bound):
        raise InvalidParameterError(f"The 'bound' parameter of audit_replay must be a Bound; got {type(bound).__name__}.")
    if (confidence, delta) != (0.95, None):
        raise InvalidParameterError("Pass either bound=, or its shorthands confidence= and delta=, not both.")
    return bound


def _pairs(mech: Mechanism, d0: Any, d1: Any, search: bool, kinds: Iterable[str] | None, seed: int) -> list[Candidate]:
    """Return the pairs to replay: the one given, the default pair, or (search) the default pair and the generated ones."""
    if d0 is not None or d1 is not None:
        if search:
            raise InvalidParameterError("Pass d0 and d1, or ask for a pair search, not both.")
        if d0 is None or d1 is None:
            raise InvalidParameterError("Pass both d0 and d1, or neither to use the mechanism's default pair.")
        return [Candidate("given", *check_pair(mech, d0, d1), "the pair given")]
    if search:
        found = candidates(mech, rng=np.random.default_rng(np.random.SeedSequence([seed, REPLAY_KEY, 1])), kinds=kinds)
        if found:
            return found
    if mech.default_pair is None:
        raise InvalidParameterError(
            f"Mechanism '{mech.name}' has no default neighbouring pair; give it one with "
            "blackbox(..., default_pair=(d0, d1)), or pass d0 and d1 to audit_replay."
        )
    return [Candidate("default", *check_pair(mech, *mech.default_pair), "the default pair")]


def audit_replay(
    mechanism: Mechanism,
    d0: Any = None,
    d1: Any = None,
    *,
    trials: int = DEFAULT_TRIALS,
    seed: int = 0,
    confidence: float = 0.95,
    delta: float | None = None,
    search: bool = False,
    kinds: Iterable[str] | None = None,
    certify: int = 3,
    bound: Bound | None = None,
    execution: Execution | None = None,
) -> ReplayResult:
    """Replay `mechanism`'s draws on neighbours, certify what that shows on fresh draws; return a `ReplayResult`.

    Each candidate pair is replayed at two runs: one on d0 with a recording
    `numpy.random.Generator`, one on d1 with the same noise
    (`dpaudit.attacks.replay`). A pair is flagged when the replay on d1
    asks for other draws (a divergence), the release's form changes (a
    data-derived shape), or the move of the release with the noise frozen
    implies, under the recorded noise's law and scale, an ε above the
    claim, or moves where no law prices it ("not priced"). At most
    `certify` flagged pairs (the structural ones first, then by implied ε,
    then the unpriced ones; the top pair when none is flagged) are certified by
    `audit_mechanism` with `trials` fresh outputs per dataset, each at
    confidence 1 − β/k, its test aimed at what moved. The result is the
    largest of these bounds, which holds at `confidence` (union bound): the
    replays' draws come from a stream of their own, so choosing the pairs
    and the aims costs nothing against β. The verdict follows it alone.

    Sound under the same assumptions as `audit_mechanism`; the replay itself
    assumes that every random number comes from the rng handed to the
    mechanism, and raises `NotReplayable` naming any other source it saw.

    Args:
        mechanism: the `Mechanism` to audit; its sampler must draw from the rng it is given.
        d0, d1: the pair to replay (default: the default pair; with `search`, it and the generated neighbours).
        trials: outputs per dataset of each certificate.
        seed, confidence, delta: of the audit (or `bound=Bound(confidence=, delta=, strategy=)`).
        search, kinds: screen the neighbours of `dpaudit.attacks.neighbour_candidates` (of these kinds).
        certify: how many flagged pairs are certified at most (β is split evenly between them).
        execution: where the certificates' trials run (`Execution`).

    Returns:
        A `ReplayResult`: the deciding certificate and, in `replay`, the findings of each pair certified.

    Raises:
        InvalidParameterError: on bad input (one sentence); NotReplayable for noise drawn outside the rng.
        MechanismError: when the mechanism raises on d0, changes its output shape or exits.
    """
    if not isinstance(mechanism, Mechanism):
        raise InvalidParameterError(
            f"audit_replay needs a Mechanism; got {type(mechanism).__name__} (wrap a function with dpaudit.mechanisms.blackbox)."
        )
    seed = check_int(seed, "seed", "audit_replay", low=0)
    trials = check_int(trials, "trials", "audit_replay", low=10)
    certify = check_int(certify, "certify", "audit_replay", low=1)
    bound = _bound(bound, confidence, delta)
    if execution is not None and not isinstance(execution, Execution):
        raise InvalidParameterError(f"The 'execution' parameter of audit_replay must be an Execution; got {type(execution).__name__}.")
    start = time.perf_counter()
    pairs = _pairs(mechanism, d0, d1, bool(search), kinds, seed)
    screened = screen(mechanism, pairs, seed=np.random.SeedSequence([seed, REPLAY_KEY]))
    at = bound.delta_for(mechanism.claim.delta)
    chosen, flagged = _chosen([r for _, r in screened], mechanism.claim.epsilon, at, certify)
    share = 1.0 / len(chosen)
    certified = _certified([screened[i] for i in chosen], mechanism, trials=trials, seed=seed, share=share, bound=bound,
                           execution=execution, delta=at)
    report = ReplayReport(len(pairs), flagged, certified, runs_spent(screened, len(pairs)))
    return combined(report, bound, seed, time.perf_counter() - start)


def _certified(chosen: list[tuple[Candidate, Replay]], mech: Mechanism, *, trials: int, seed: int, share: float,
               bound: Bound, execution: Execution | None, delta: float) -> tuple[Certified, ...]:
    """Return each chosen pair's findings with the two-dataset certificate of its aimed release, at `share` of β each.

    A pair on which the audit cannot run (the mechanism raises on every call on one dataset) is left out, its share of
    β unspent; when every pair is, the first `MechanismError` is raised.
    """
    at_share = dataclasses.replace(bound, confidence=1.0 - (1.0 - bound.confidence) * share)
    done, failures = [], []
    for pair, replay in chosen:
        target, aim = aimed(mech, replay)
        try:
            result = audit_mechanism(target, replay.d0, replay.d1, trials=trials, seed=seed, bound=at_share,
                                     execution=execution)
        except MechanismError as exc:
            failures.append(exc)
            continue
        done.append(Certified(pair.kind, pair.note, replay.findings, implied_epsilon(replay.sensitivity(), delta),
                              aim.words, share, result))
    if not done:
        raise failures[0]
    return tuple(done)


def combined(report: ReplayReport, bound: Bound, seed: int, seconds: float) -> ReplayResult:
    """Return the certificate of largest bound among `report.certified`, at the confidence of all together.

    Sound when each certificate holds at its share of β (shares summing to
    at most 1): all hold at once with probability ≥ `bound.confidence`
    (union bound), and the largest with them. With more than one, the
    result keeps no evidence of its own: each certificate keeps its own in
    `replay`, and `recertify` certifies each again at its share.
    """
    certified = report.certified
    kept = max(range(len(certified)), key=lambda k: certified[k].result.lower_bound.epsilon)
    best = certified[kept].result
    selection = None
    if len(certified) > 1:
        selection = Selection(REPLAYED, tuple(c.result for c in certified), tuple(c.share for c in certified), kept)
    fields = {f.name: getattr(best, f.name) for f in dataclasses.fields(best)}
    fields.update(lower_bound=dataclasses.replace(best.lower_bound, confidence=bound.confidence), seed=seed,
                  seconds=seconds, bound=dataclasses.replace(best.bound, confidence=bound.confidence) if best.bound else None,
                  selection=selection, evidence=best.evidence if selection is None else None,
                  mechanism=best.mechanism.split(" [")[0] if certified[kept].aim != "the whole release" else best.mechanism)
    return ReplayResult(**fields, replay=report)
