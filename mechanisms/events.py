"""Privacy events that dpaudit adds to `dp_accounting.dp_event`.

A mechanism states what it actually does as an immutable event (as
dp_accounting does): the theory side (`dpaudit.audit.theory`) turns the event into an
upper bound. dp_accounting's own events (Laplace, Gaussian, randomized
response, composition, Poisson subsampling, ...) are used where they exist;
these cover what it lacks. Existing events never change meaning; new ones are
added instead.
"""

from __future__ import annotations

import attr
from dp_accounting import dp_event

__all__ = ["BrokenClaimDpEvent", "DiscreteGaussianDpEvent", "EpsilonDeltaDpEvent", "GroupDpEvent", "ShuffledDpEvent"]


@attr.s(frozen=True, slots=True, auto_attribs=True)
class EpsilonDeltaDpEvent(dp_event.DpEvent):
    """A mechanism proven (epsilon, delta)-DP, with no finer description of its privacy loss."""

    epsilon: float
    delta: float = 0.0


@attr.s(frozen=True, slots=True, auto_attribs=True)
class BrokenClaimDpEvent(dp_event.DpEvent):
    """A mechanism whose claim is known not to hold, with no analysis of what it does instead: theory bounds nothing (ε = ∞).

    Unlike `UnsupportedDpEvent` (a black box, whose claim stands as its upper
    bound), this says the claim is no bound either: a known-broken variant.
    """


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DiscreteGaussianDpEvent(dp_event.DpEvent):
    """An integer query of integer `sensitivity` plus discrete Gaussian noise, mass ∝ exp(−k²/(2 `sigma`²)) at each integer k.

    `sigma` is the distribution's parameter, not its standard deviation
    (Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential
    Privacy", NeurIPS 2020); Tumult's `sigma_squared` is its square.
    """

    sigma: float
    sensitivity: int = 1


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ShuffledDpEvent(dp_event.DpEvent):
    """`num_users` outputs of a `local_epsilon`-LDP randomizer, released in random order.

    Bounded by Feldman, McMillan and Talwar, "Hiding Among the Clones",
    arXiv 2012.12803, Thm 3.1.
    """

    local_epsilon: float
    num_users: int


@attr.s(frozen=True, slots=True, auto_attribs=True)
class GroupDpEvent(dp_event.DpEvent):
    """`event` applied to datasets that differ in `group_size` records (group privacy)."""

    event: dp_event.DpEvent
    group_size: int
