"""A dp_accounting event turned into its (pessimistic) privacy loss distribution.

This does what `dp_accounting.pld.PLDAccountant` does, with the library's own
PLD constructors, but composes by event rather than by a `count` argument:
dp_accounting 0.6.0's accountant ignores `count` for
`RandomizedResponseDpEvent` (so `compose(rr, 10)` and
`SelfComposedDpEvent(rr, 10)` both count one RR), which here becomes an
explicit `self_compose(count)` of the RR PLD. It also accepts the Laplace and
discrete Laplace events under replace-one (sensitivity 2C, dp_accounting's
convention for the Gaussian), dpaudit's `DiscreteGaussianDpEvent` (the
library's `from_discrete_gaussian_mechanism`, which has no event of its
own), and hands events it does not know to a callback.

Pessimistic PLDs give upper bounds on δ(ε) (Meiser & Mohammadi, CCS 2018;
Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, PETS 2022, "Connect the Dots").
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Callable, Optional

if TYPE_CHECKING:
    from dp_accounting import dp_event
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution as PLD
    from dp_accounting.privacy_accountant import NeighboringRelation

    LeafPld = Callable[[dp_event.DpEvent], Optional[PLD]]

__all__ = ["event_pld", "has_library_pld", "non_private_pld", "privacy_parameters_pld"]

DISCRETIZATION = 1e-4


def privacy_parameters_pld(epsilon: float, delta: float, discretization: float = DISCRETIZATION) -> PLD:
    """Return the pessimistic PLD dominating every (ε, δ)-DP mechanism (infinite loss w.p. δ).

    Kairouz, Oh, Viswanath, ICML 2015, Thm 2.1 (the (ε, δ) region is that of
    randomized response with a δ atom); dp_accounting's
    `from_privacy_parameters`.
    """
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    params = common.DifferentialPrivacyParameters(epsilon=epsilon, delta=delta)
    return pld_lib.from_privacy_parameters(params, value_discretization_interval=discretization)


def non_private_pld() -> PLD:
    """Return the PLD of a mechanism with no privacy (infinite loss with probability 1)."""
    return privacy_parameters_pld(0.0, 1.0)


def event_pld(
    event: dp_event.DpEvent,
    *,
    relation: NeighboringRelation,
    leaf_pld: LeafPld,
    discretization: float = DISCRETIZATION,
) -> PLD | None:
    """Return a pessimistic PLD of `event`, or None when some part of it has no known PLD.

    Composition (basic and self) composes the parts' PLDs (exact for PLDs;
    Sommer, Meiser, Mohammadi, PETS 2019). Events the library has no
    constructor for are passed to `leaf_pld`, which returns a dominating PLD
    or None.
    """
    from dp_accounting import dp_event
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    build = functools.partial(event_pld, relation=relation, leaf_pld=leaf_pld, discretization=discretization)
    if isinstance(event, dp_event.NoOpDpEvent):
        return pld_lib.identity(value_discretization_interval=discretization)
    if isinstance(event, dp_event.NonPrivateDpEvent):
        return non_private_pld()
    if isinstance(event, dp_event.SelfComposedDpEvent):
        if event.count == 0:
            return pld_lib.identity(value_discretization_interval=discretization)
        inner = build(event.event)
        return None if inner is None else inner.self_compose(event.count)
    if isinstance(event, dp_event.ComposedDpEvent):
        total = pld_lib.identity(value_discretization_interval=discretization)
        for part in event.events:
            part_pld = build(part)
            if part_pld is None:
                return None
            total = total.compose(part_pld)
        return total
    base = _mechanism_pld(event, relation, discretization)
    return base if base is not None else leaf_pld(event)


def has_library_pld(event: dp_event.DpEvent, relation: NeighboringRelation) -> bool:
    """Return True when `event` is a single mechanism with a dp_accounting PLD constructor here."""
    from dp_accounting import dp_event
    from dp_accounting.privacy_accountant import NeighboringRelation
    from dpaudit.mechanisms.events import DiscreteGaussianDpEvent

    if isinstance(event, dp_event.PoissonSampledDpEvent):
        inner = event.event
        return (
            event.sampling_probability == 0
            or (isinstance(inner, dp_event.GaussianDpEvent) and inner.noise_multiplier > 0)
            or (
                isinstance(inner, dp_event.LaplaceDpEvent)
                and inner.noise_multiplier > 0
                and relation == NeighboringRelation.ADD_OR_REMOVE_ONE
            )
        )
    if isinstance(event, dp_event.MixtureOfGaussiansDpEvent):
        return relation == NeighboringRelation.ADD_OR_REMOVE_ONE
    if isinstance(event, DiscreteGaussianDpEvent):
        return event.sigma > 0 and isinstance(event.sensitivity, int) and event.sensitivity >= 1
    return isinstance(
        event,
        (
            dp_event.GaussianDpEvent,
            dp_event.LaplaceDpEvent,
            dp_event.DiscreteLaplaceDpEvent,
            dp_event.RandomizedResponseDpEvent,
            dp_event.TruncatedSubsampledGaussianDpEvent,
        ),
    )


def _mechanism_pld(event: dp_event.DpEvent, relation: NeighboringRelation, discretization: float) -> PLD | None:
    """Return the library PLD of a single noise-adding event, or None if it has none here."""
    from dp_accounting import dp_event
    from dp_accounting.pld import privacy_loss_distribution as pld_lib
    from dp_accounting.privacy_accountant import NeighboringRelation
    from dpaudit.mechanisms.events import DiscreteGaussianDpEvent

    if not has_library_pld(event, relation):
        return None
    replace = relation == NeighboringRelation.REPLACE_ONE
    if isinstance(event, dp_event.GaussianDpEvent):
        if event.noise_multiplier == 0:
            return non_private_pld()
        return pld_lib.from_gaussian_mechanism(
            event.noise_multiplier, value_discretization_interval=discretization, neighboring_relation=relation
        )
    if isinstance(event, dp_event.LaplaceDpEvent):
        if event.noise_multiplier == 0:
            return non_private_pld()
        return pld_lib.from_laplace_mechanism(
            event.noise_multiplier, sensitivity=2.0 if replace else 1.0, value_discretization_interval=discretization
        )
    if isinstance(event, dp_event.DiscreteLaplaceDpEvent):
        if event.noise_parameter == 0:
            return non_private_pld()
        return pld_lib.from_discrete_laplace_mechanism(
            event.noise_parameter,
            sensitivity=event.sensitivity * (2 if replace else 1),
            value_discretization_interval=discretization,
        )
    if isinstance(event, DiscreteGaussianDpEvent):
        return pld_lib.from_discrete_gaussian_mechanism(
            event.sigma, sensitivity=event.sensitivity * (2 if replace else 1), value_discretization_interval=discretization
        )
    if isinstance(event, dp_event.RandomizedResponseDpEvent):
        return _randomized_response_pld(event, discretization)
    if isinstance(event, dp_event.PoissonSampledDpEvent):
        return _poisson_pld(event, relation, discretization)
    if isinstance(event, dp_event.MixtureOfGaussiansDpEvent):
        if event.standard_deviation == 0:
            return non_private_pld()
        return pld_lib.from_mixture_gaussian_mechanism(
            event.standard_deviation,
            event.sensitivities,
            event.sampling_probs,
            value_discretization_interval=discretization,
        )
    if event.noise_multiplier == 0:
        return non_private_pld()
    return pld_lib.from_truncated_subsampled_gaussian_mechanism(
        event.dataset_size,
        event.sampling_probability,
        event.truncated_batch_size,
        event.noise_multiplier,
        value_discretization_interval=discretization,
        neighboring_relation=relation,
    )


def _randomized_response_pld(event: dp_event.RandomizedResponseDpEvent, discretization: float) -> PLD:
    """Return RR's PLD for a change of its one input (replace-one), whatever the relation.

    The replace-one profile dominates the replace-with-uniform ("special")
    one, since the uniform output law is the average of the R(x') (joint
    convexity of the hockey-stick divergence), so it is a sound upper bound
    for add/remove too.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib
    from dp_accounting.privacy_accountant import NeighboringRelation

    if event.num_buckets == 1:
        return pld_lib.identity(value_discretization_interval=discretization)
    if event.noise_parameter == 0:
        return non_private_pld()
    return pld_lib.from_randomized_response(
        event.noise_parameter,
        event.num_buckets,
        value_discretization_interval=discretization,
        neighboring_relation=NeighboringRelation.REPLACE_ONE,
    )


def _poisson_pld(event: dp_event.PoissonSampledDpEvent, relation: NeighboringRelation, discretization: float) -> PLD:
    """Return the PLD of Poisson-subsampled Gaussian (both relations) or Laplace (add/remove)."""
    from dp_accounting import dp_event
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    q = event.sampling_probability
    inner = event.event
    if q == 0:
        return pld_lib.identity(value_discretization_interval=discretization)
    if isinstance(inner, dp_event.GaussianDpEvent):
        return pld_lib.from_gaussian_mechanism(
            inner.noise_multiplier,
            value_discretization_interval=discretization,
            sampling_prob=q,
            neighboring_relation=relation,
        )
    return pld_lib.from_laplace_mechanism(
        inner.noise_multiplier, value_discretization_interval=discretization, sampling_prob=q
    )
