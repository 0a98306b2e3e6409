"""What `audit_mechanism` plays when it is not told how many trials: a fixed 10⁶, or the sequential audit where draws cost.

Issue 53's rule: the sequential audit (`sequential_trials`) wherever a draw
is expensive, the fixed budget elsewhere. A draw is expensive when the
mechanism's outputs come from another process (an `ExternalMechanism`:
`--command`, `--python`, and every library adapter that runs in an
environment of its own, the synthetic-data generators among them), or when
it is registered under its name with an environment or a suite cost below 1
(`Registration.suite_trials`: the library adapters that run in this
process, OpenDP, PyDP, PipelineDP, Opacus). The sequential default has the
fixed default's budget, DEFAULT_TRIALS per dataset, so it never draws
more; it stops at a certified violation or once the claim is out of reach.
Elsewhere the fixed default is faster for the same bound (an in-process
numpy draw of 10⁶ takes well under a second, and the sequential bound is
0.91 to 1.08 of the fixed one at the same budget: docs/numbers.md), so it
stays. The choice reads the mechanism's type and registration only, never
a draw, so the same call makes the same choice on every machine; an
explicit `trials` (a number, "auto" or "sequential") is always played as
given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit.audit.audits.sequential_trials import SEQUENTIAL, sequences_certify
from dpaudit.errors import UnknownMechanismError
from dpaudit.mechanisms.external.processes import ExternalMechanism
from dpaudit.mechanisms.registry import registration

if TYPE_CHECKING:
    from dpaudit.audit.estimators.certify import Bound
    from dpaudit.mechanisms.base import Mechanism

__all__ = ["DEFAULT_TRIALS", "costly_draws", "default_trials"]

DEFAULT_TRIALS = 1_000_000
"""The fixed default's trials per dataset, and the sequential default's budget."""


def costly_draws(mechanism: Mechanism) -> str | None:
    """Return why a draw of `mechanism` is expensive, in words ("its outputs come from another process"), or None."""
    if isinstance(mechanism, ExternalMechanism):
        return "its outputs come from another process"
    try:
        registered = registration(mechanism.name)
    except UnknownMechanismError:
        return None
    if registered.environment is not None:
        return f"it is registered with the library environment {registered.environment}"
    if registered.suite_trials < 1.0:
        return f"it is registered as a slow sampler, at {registered.suite_trials:g} of the suite's budget"
    return None


def default_trials(mechanism: Mechanism, bound: Bound) -> tuple[int | str, str | None]:
    """Return the trials `audit_mechanism` plays when given none, and why it chose the sequential audit (None: it did not).

    Sequential ("sequential") when a draw of `mechanism` is expensive
    (`costly_draws`) and `bound` is the two-rates interval of held-out
    counts, the only one sequences certify; else DEFAULT_TRIALS, fixed.
    Sound either way: it reads the mechanism's type and registration, no draw.
    """
    why = costly_draws(mechanism)
    if why is None or not sequences_certify(bound):
        return DEFAULT_TRIALS, None
    return SEQUENTIAL, why
