"""The tightest ε that theory gives for a mechanism's event, at a given δ.

`upper_bound(event, delta=δ)` dispatches on the event: closed forms where
they are exact and cheap (method "exact"), the proven claim of an
`EpsilonDeltaDpEvent` ("claim-proof"), shuffling ("shuffling-fmt"), group
privacy ("group"), generic Poisson subsampling ("subsampling"), and
otherwise dp_accounting's pessimistic privacy loss distributions ("pld").
Every number returned is an upper bound: numerical roots are rounded up and
PLDs are pessimistic.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import TYPE_CHECKING, Any, Callable

from dpaudit.audit.theory.amplification import amplified_epsilon, shuffled_epsilon
from dpaudit.audit.theory.composition import kov_epsilon
from dpaudit.audit.theory.event_pld import event_pld, has_library_pld, non_private_pld, privacy_parameters_pld
from dpaudit.audit.theory.group import group_epsilon
from dpaudit.audit.theory.profiles import gdp_epsilon, laplace_epsilon, randomized_response_epsilon
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.deferred_event import DeferredEvent, is_unsupported
from dpaudit.validation import check_delta, check_int

if TYPE_CHECKING:
    from dp_accounting import dp_event
    from dp_accounting.privacy_accountant import NeighboringRelation
    from dpaudit.audit.theory.event_pld import PLD
    from dpaudit.mechanisms.events import GroupDpEvent, ShuffledDpEvent

__all__ = ["UpperBound", "claim_epsilon", "theory_upper_bound", "upper_bound"]

Profile = Callable[[float], float]

_RELATIONS = {"add-remove": "ADD_OR_REMOVE_ONE", "replace-one": "REPLACE_ONE"}
"""The member of dp_accounting's `NeighboringRelation` for each relation dpaudit names."""


@dataclasses.dataclass(frozen=True)
class UpperBound:
    """The mechanism is (`epsilon`, `delta`)-DP by the theorem or accountant named in `method`."""

    epsilon: float
    delta: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        """Return {"epsilon", "delta", "method"}, epsilon None when infinite (the JSON `upper_bound`)."""
        return {
            "epsilon": self.epsilon if math.isfinite(self.epsilon) else None,
            "delta": self.delta,
            "method": self.method,
        }


def upper_bound(event: dp_event.DpEvent | DeferredEvent, *, delta: float, relation: str = "add-remove") -> UpperBound:
    """Return the smallest ε at `delta` that theory gives for `event` under `relation`.

    `relation` is "add-remove" or "replace-one". Conventions follow
    dp_accounting: Gaussian/Laplace noise multipliers are relative to the
    bound C on one record's contribution, so replace-one has sensitivity 2C;
    randomized response is analysed for a change of its input (replace-one),
    which also bounds add/remove. `ShuffledDpEvent` is analysed for n users
    with one user's data changed. Unknown events give ε = inf with method
    "unknown". A `DeferredEvent` of Laplace noise is answered without
    building it (no dp_accounting import); any other is built first.
    """
    delta = check_delta(delta, "delta", "upper_bound")
    key = _relation_key(relation)
    if isinstance(event, DeferredEvent):
        laplace = _deferred_laplace(event, key)
        if laplace is not None:
            return UpperBound(epsilon=float(laplace(delta)), delta=delta, method="exact")
        event = event.build()
    profile, method = _epsilon_profile(event, relation=_relation(key))
    return UpperBound(epsilon=float(profile(delta)), delta=delta, method=method)


def _relation_key(relation: object) -> str:
    """Return the name of `relation` ("add-remove" or "replace-one"), or raise `InvalidParameterError`."""
    key = getattr(relation, "value", relation)
    if key not in _RELATIONS:
        choices = ", ".join(repr(name) for name in _RELATIONS)
        raise InvalidParameterError(
            f"The 'relation' parameter of upper_bound must be one of {choices}; got {relation!r} instead."
        )
    return key


def _relation(relation: object) -> NeighboringRelation:
    from dp_accounting.privacy_accountant import NeighboringRelation

    return NeighboringRelation[_RELATIONS[_relation_key(relation)]]


def _deferred_laplace(event: DeferredEvent, relation: str) -> Profile | None:
    """Return the exact profile of a deferred `LaplaceDpEvent` (`_laplace_profile`) without building it, else None."""
    if event.kind != "LaplaceDpEvent":
        return None
    return _laplace_profile(event.field("noise_multiplier"), 2.0 if relation == "replace-one" else 1.0)


def _laplace_profile(noise_multiplier: float, sensitivity: float) -> Profile | None:
    """Return δ ↦ ε(δ) of Laplace noise `noise_multiplier` · C on a query of sensitivity `sensitivity` · C, or None at 0 noise."""
    if not noise_multiplier > 0:
        return None
    eps0 = sensitivity / noise_multiplier
    return lambda delta: laplace_epsilon(delta=delta, epsilon0=eps0)


def _epsilon_profile(event: dp_event.DpEvent, *, relation: NeighboringRelation) -> tuple[Profile, str]:
    """Return (δ ↦ upper bound on ε(δ), method) for `event`; see `upper_bound`."""
    special = _special_profile(event, relation)
    if special is not None:
        return special
    exact = _exact_profile(event, relation)
    if exact is not None:
        return exact, "exact"
    return _pld_profile(event, relation)


def _special_profile(event: dp_event.DpEvent, relation: NeighboringRelation) -> tuple[Profile, str] | None:
    """Return the profile of an event with its own theorem, looked up by event type in `_special_profiles`, or None."""
    special = _special_profiles()
    for kind in type(event).__mro__:
        if kind in special:
            return special[kind](event, relation)
    return None


def _poisson_special(event: dp_event.PoissonSampledDpEvent, relation: NeighboringRelation) -> tuple[Profile, str] | None:
    """Subsampling of an event dp_accounting has no PLD for; None leaves it to the PLD."""
    return None if has_library_pld(event, relation) else _subsampled_profile(event, relation)


def claim_epsilon(epsilon: float, delta0: float, delta: float) -> float:
    """Return ε(δ) at `delta` of a mechanism proven (`epsilon`, `delta0`)-DP: RR with ε0 plus a δ0 atom (Kairouz, Oh, Viswanath, Thm 2.1).

    ∞ below δ0 (the claim bounds nothing there) or for an infinite ε0.
    """
    delta = check_delta(delta, "delta", "claim_epsilon")
    if delta < delta0 or not math.isfinite(epsilon):
        return math.inf
    if delta0 == 0.0 and delta == 0.0:
        return float(epsilon)
    rest = (delta - delta0) / (1.0 - delta0)
    return min(float(epsilon), randomized_response_epsilon(delta=rest, epsilon0=epsilon))


def _shuffled_profile(event: ShuffledDpEvent) -> Profile:
    def profile(delta: float) -> float:
        if delta == 0.0:
            return float(event.local_epsilon)
        return shuffled_epsilon(epsilon0=event.local_epsilon, num_users=event.num_users, delta=delta)

    return profile


def _group_profile(event: GroupDpEvent, relation: NeighboringRelation) -> tuple[Profile, str]:
    """Group privacy; Laplace and Gaussian noise scale with the group's sensitivity kC instead (exact)."""
    from dp_accounting import dp_event

    k = check_int(event.group_size, "group_size", "GroupDpEvent")
    inner = event.event
    if isinstance(inner, dp_event.LaplaceDpEvent):
        return _epsilon_profile(dp_event.LaplaceDpEvent(inner.noise_multiplier / k), relation=relation)[0], "group"
    if isinstance(inner, dp_event.GaussianDpEvent):
        return _epsilon_profile(dp_event.GaussianDpEvent(inner.noise_multiplier / k), relation=relation)[0], "group"
    inner_profile, inner_method = _epsilon_profile(inner, relation=relation)
    if inner_method == "unknown":
        return inner_profile, inner_method
    return (lambda delta: group_epsilon(inner_profile, group_size=k, delta=delta)), "group"


def _subsampled_profile(event: dp_event.PoissonSampledDpEvent, relation: NeighboringRelation) -> tuple[Profile, str]:
    """Poisson subsampling of any event: (log(1 + q(e^ε − 1)), qδ) for add/remove (Balle et al. 2018, Thm 8);
    (ε, qδ) for replace-one (joint convexity of the hockey-stick divergence)."""
    from dp_accounting.privacy_accountant import NeighboringRelation

    q = event.sampling_probability
    inner, inner_method = _epsilon_profile(event.event, relation=relation)
    if inner_method == "unknown":
        return inner, inner_method

    def profile(delta: float) -> float:
        if delta >= q:
            return 0.0
        eps_in = inner(delta / q)
        if relation == NeighboringRelation.REPLACE_ONE:
            return eps_in
        return amplified_epsilon(eps_in, q)

    return profile, "subsampling"


@functools.cache
def _special_profiles() -> dict[type, Callable[[Any, NeighboringRelation], tuple[Profile, str] | None]]:
    """Return the events with a theorem of their own, by type: the one dispatch table of `_epsilon_profile`."""
    from dp_accounting import dp_event
    from dpaudit.mechanisms.events import BrokenClaimDpEvent, EpsilonDeltaDpEvent, GroupDpEvent, ShuffledDpEvent

    return {
        dp_event.NoOpDpEvent: lambda event, relation: ((lambda d: 0.0), "exact"),
        dp_event.NonPrivateDpEvent: lambda event, relation: ((lambda d: math.inf), "non-private"),
        dp_event.UnsupportedDpEvent: lambda event, relation: ((lambda d: math.inf), "unknown"),
        BrokenClaimDpEvent: lambda event, relation: ((lambda d: math.inf), "unknown"),
        EpsilonDeltaDpEvent: lambda event, relation: (
            (lambda d: claim_epsilon(event.epsilon, event.delta, d)), "claim-proof"),
        ShuffledDpEvent: lambda event, relation: (_shuffled_profile(event), "shuffling-fmt"),
        GroupDpEvent: _group_profile,
        dp_event.PoissonSampledDpEvent: _poisson_special,
    }


def _exact_profile(event: dp_event.DpEvent, relation: NeighboringRelation) -> Profile | None:
    """Closed forms: Laplace, compositions of Gaussians, k-ary RR, k-fold binary RR or (ε, δ) claims."""
    from dp_accounting import dp_event
    from dp_accounting.privacy_accountant import NeighboringRelation

    sensitivity = 2.0 if relation == NeighboringRelation.REPLACE_ONE else 1.0
    if isinstance(event, dp_event.LaplaceDpEvent) and event.noise_multiplier > 0:
        return _laplace_profile(event.noise_multiplier, sensitivity)
    if isinstance(event, dp_event.RandomizedResponseDpEvent) and 0 < event.noise_parameter and event.num_buckets > 1:
        k = event.num_buckets
        eps0 = math.log1p(k * (1.0 - event.noise_parameter) / event.noise_parameter)
        return lambda delta: randomized_response_epsilon(delta=delta, epsilon0=eps0, num_buckets=k)
    kov = _kov_profile(event)
    if kov is not None:
        return kov
    mu = _gaussian_mu(event)
    if mu is not None and mu > 0 and math.isfinite(mu):
        return lambda delta: gdp_epsilon(delta=delta, mu=sensitivity * mu)
    return None


def _kov_profile(event: dp_event.DpEvent) -> Profile | None:
    """k-fold binary RR or k-fold (ε, δ) claim: the optimal composition theorem is exact (KOV Thm 3.3)."""
    from dp_accounting import dp_event
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    if not isinstance(event, dp_event.SelfComposedDpEvent) or event.count < 1:
        return None
    inner, k = event.event, event.count
    if isinstance(inner, EpsilonDeltaDpEvent):
        eps0, delta0 = float(inner.epsilon), float(inner.delta)
    elif (
        isinstance(inner, dp_event.RandomizedResponseDpEvent)
        and inner.num_buckets == 2
        and 0 < inner.noise_parameter
    ):
        eps0, delta0 = math.log1p(2.0 * (1.0 - inner.noise_parameter) / inner.noise_parameter), 0.0
    else:
        return None
    return lambda delta: kov_epsilon(epsilon=eps0, delta=delta0, k=k, target_delta=delta)


def _gaussian_mu(event: dp_event.DpEvent) -> float | None:
    """Return μ = √(Σ 1/σ_i²) when `event` composes only Gaussian events (μ-GDP composition,
    Dong, Roth, Su, arXiv 1905.02383, Cor. 3.3), else None."""
    from dp_accounting import dp_event

    if isinstance(event, dp_event.GaussianDpEvent):
        return math.inf if event.noise_multiplier == 0 else 1.0 / event.noise_multiplier
    if isinstance(event, dp_event.SelfComposedDpEvent):
        inner = _gaussian_mu(event.event)
        return None if inner is None else math.sqrt(event.count) * inner
    if isinstance(event, dp_event.ComposedDpEvent) and event.events:
        parts = [_gaussian_mu(part) for part in event.events]
        if any(part is None for part in parts):
            return None
        return math.sqrt(sum(part * part for part in parts))
    return None


def _needs_budget(event: dp_event.DpEvent, relation: NeighboringRelation) -> bool:
    """True for parts bounded at a chosen δ rather than by a PLD: shuffling, group, generic subsampling."""
    from dp_accounting import dp_event
    from dpaudit.mechanisms.events import GroupDpEvent, ShuffledDpEvent

    if isinstance(event, dp_event.PoissonSampledDpEvent):
        return not has_library_pld(event, relation)
    return isinstance(event, (ShuffledDpEvent, GroupDpEvent))


def _budgeted_leaves(event: dp_event.DpEvent, relation: NeighboringRelation) -> int:
    """Count (with multiplicity) the parts that need a share of δ when composed."""
    from dp_accounting import dp_event

    if isinstance(event, dp_event.SelfComposedDpEvent):
        return event.count * _budgeted_leaves(event.event, relation)
    if isinstance(event, dp_event.ComposedDpEvent):
        return sum(_budgeted_leaves(part, relation) for part in event.events)
    return int(_needs_budget(event, relation))


def _supported(event: dp_event.DpEvent, relation: NeighboringRelation) -> bool:
    """True when every part of `event` has some bound (a PLD, a claim, or a budgeted theorem)."""
    from dp_accounting import dp_event
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    if isinstance(event, dp_event.SelfComposedDpEvent):
        return _supported(event.event, relation)
    if isinstance(event, dp_event.ComposedDpEvent):
        return all(_supported(part, relation) for part in event.events)
    if isinstance(event, (dp_event.NoOpDpEvent, dp_event.NonPrivateDpEvent, EpsilonDeltaDpEvent)):
        return True
    if _needs_budget(event, relation):
        return _epsilon_profile(event, relation=relation)[1] != "unknown"
    return has_library_pld(event, relation)


def _pld_profile(event: dp_event.DpEvent, relation: NeighboringRelation) -> tuple[Profile, str]:
    """ε(δ) from the composed pessimistic PLD; parts without a PLD enter as (ε_i, δ/(2m)) with m such parts."""
    if not _supported(event, relation):
        return (lambda d: math.inf), "unknown"
    leaves = _budgeted_leaves(event, relation)

    def build(delta: float) -> PLD | None:
        share = delta / (2.0 * leaves) if leaves else 0.0
        return event_pld(event, relation=relation, leaf_pld=lambda leaf: _leaf_pld(leaf, relation, share))

    pure = _pure_epsilon(event, relation)
    fixed = _build_or_none(build) if leaves == 0 else None

    def profile(delta: float) -> float:
        if delta == 0.0 and pure is not None:
            return pure
        try:
            return float((fixed or build(delta)).get_epsilon_for_delta(delta))
        except _TOO_LARGE:  # dp_accounting cannot represent the loss at huge ε; the pure ε still bounds ε(δ)
            return math.inf if pure is None else pure

    return profile, "pld"


_TOO_LARGE = (OverflowError, ValueError, MemoryError)
"""What dp_accounting raises when a PLD would be too large to build (e.g. "Maximum allowed size exceeded" at
ε = 1e300); falling back to the pure ε, or ∞, keeps the upper bound an upper bound."""


def _build_or_none(build: Callable[[float], PLD | None]) -> PLD | None:
    try:
        return build(0.0)
    except _TOO_LARGE:
        return None


def _pure_epsilon(event: dp_event.DpEvent, relation: NeighboringRelation) -> float | None:
    """Return the exact ε at δ = 0 of an event whose privacy loss is bounded, else None.

    Laplace Δ/b, discrete Laplace aΔ (both doubled under replace-one, whose
    sensitivity is twice a record's bound, as dp_accounting's PLDs have it),
    k-ary RR, pure claims; summed over
    compositions (the worst-case losses add up, attained together with
    positive probability) and log(1 + q(e^ε − 1)) under Poisson subsampling
    for add/remove (Balle, Barthe, Gaboardi 2018, tight). The PLD accountant
    truncates tails and so reports ∞ at δ = 0 for these.
    """
    from dp_accounting import dp_event
    from dp_accounting.privacy_accountant import NeighboringRelation
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    factor = 2.0 if relation == NeighboringRelation.REPLACE_ONE else 1.0
    if isinstance(event, dp_event.NoOpDpEvent):
        return 0.0
    if isinstance(event, dp_event.LaplaceDpEvent) and event.noise_multiplier > 0:
        return factor / event.noise_multiplier
    if isinstance(event, dp_event.DiscreteLaplaceDpEvent):
        return factor * event.noise_parameter * event.sensitivity
    if isinstance(event, dp_event.RandomizedResponseDpEvent) and event.noise_parameter > 0:
        return math.log1p(event.num_buckets * (1.0 - event.noise_parameter) / event.noise_parameter)
    if isinstance(event, EpsilonDeltaDpEvent) and event.delta == 0.0:
        return float(event.epsilon)
    if isinstance(event, dp_event.SelfComposedDpEvent):
        inner = _pure_epsilon(event.event, relation)
        return None if inner is None else event.count * inner
    if isinstance(event, dp_event.ComposedDpEvent):
        parts = [_pure_epsilon(part, relation) for part in event.events]
        return None if any(p is None for p in parts) else float(sum(parts))
    if isinstance(event, dp_event.PoissonSampledDpEvent) and relation == NeighboringRelation.ADD_OR_REMOVE_ONE:
        inner = _pure_epsilon(event.event, relation)
        return None if inner is None else amplified_epsilon(inner, event.sampling_probability)
    return None


def _leaf_pld(leaf: dp_event.DpEvent, relation: NeighboringRelation, share: float) -> PLD:
    """A dominating PLD for a part that has none in dp_accounting: its claim, or its bound at δ = `share`."""
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    if isinstance(leaf, EpsilonDeltaDpEvent):
        return privacy_parameters_pld(float(leaf.epsilon), float(leaf.delta))
    eps = _epsilon_profile(leaf, relation=relation)[0](share)
    return privacy_parameters_pld(eps, share) if math.isfinite(eps) else non_private_pld()


def theory_upper_bound(mech: Mechanism, delta: float) -> UpperBound:
    """Return the theory upper bound at `delta`: from the mechanism's event, else from its claim (a black box).

    A claim (ε, δ₀) bounds ε at δ ≥ δ₀ only (at larger δ, by the (ε, δ₀)
    region's ε(δ), Kairouz, Oh, Viswanath 2015, Thm 2.1); below δ₀ it
    bounds nothing, and the upper bound is ∞. A deferred event
    (`dpaudit.mechanisms.deferred_event`) is read without being built where
    the theory has its closed form.
    """
    event = mech.declared_event()
    if not is_unsupported(event):
        return upper_bound(event, delta=delta, relation=mech.claim.relation.value)
    return UpperBound(claim_epsilon(mech.claim.epsilon, mech.claim.delta, delta), delta, "claim")
