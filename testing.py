"""A privacy regression check for a library's own test suite: `dpaudit.testing.assert_private`.

```python
from dpaudit.mechanisms import blackbox
from dpaudit.testing import assert_private

def test_my_laplace_keeps_its_claim():
    assert_private(blackbox(my_laplace, epsilon=1.0), [0.0], [0.0, 1.0])  # one record added
```

The check audits with `trials="auto"` (rounds of growing size, each paying
its share of β = 1 − confidence) and fails the calling test only when a
violation is certified. Its false-alarm rate is therefore at most
1 − `confidence` for any mechanism that is (ε, δ)-DP on the pair audited
(the union bound over rounds of `dpaudit.audit.audits.auto_trials`; the
held-out bound of Kairouz, Oh and Viswanath, ICML 2015, in each round). A
pass is not a proof of privacy: it says that this audit, within its budget,
found no violation. The rounds are planned from `max_trials` alone, never
from the clock, so the check is deterministic given its seed (the same
verdict and ε on a fast machine and a slow one), and the command its
failure prints repeats it exactly; an audit that takes longer than
`max_seconds` warns, naming `max_trials` as the knob that shortens it.

With `replay=True` the check is `dpaudit.audit.audit_replay` instead: the
pair (the one given; else the default pair and the neighbours a bug hunter
would try, two runs each) is replayed with the noise frozen, and at most
`REPLAY_CERTIFICATES` flagged pairs are certified on fresh draws, each at
its share of β and with `max_trials` split evenly between them; the same
false-alarm rate holds (the union bound of `audit_replay`).
"""

from __future__ import annotations

import inspect
import os
import shlex
import time
import warnings
from typing import Any

from dpaudit.audit.audits.auto_trials import AutoBudget
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.results.result import VIOLATION, AuditResult
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.registry import factory, get_mechanism, list_mechanisms
from dpaudit.validation import check_int

__all__ = ["PrivacyViolation", "assert_private"]

MAX_SECONDS = 60.0
MAX_TRIALS = 4_000_000
REPLAY_CERTIFICATES = 3
"""With `replay=True`: the flagged pairs certified at most (`audit_replay`'s `certify`), `max_trials` split between them."""


class PrivacyViolation(AssertionError):
    """A certified violation: `result` holds the audit (its lower bound is above the claim at `confidence`)."""

    def __init__(self, message: str, result: AuditResult) -> None:
        super().__init__(message)
        self.result = result


def assert_private(
    mechanism: Mechanism,
    d0: Any = None,
    d1: Any = None,
    *,
    confidence: float = 0.95,
    max_seconds: float = MAX_SECONDS,
    max_trials: int = MAX_TRIALS,
    seed: int = 0,
    replay: bool = False,
) -> AuditResult:
    """Return the audit of `mechanism` on (d0, d1) when it certifies no violation; raise `PrivacyViolation` otherwise.

    `d0`/`d1` default to the mechanism's worst-case pair. The claim checked
    is the mechanism's own (`mechanism.claim`). A mechanism that keeps its
    claim fails with probability at most 1 − `confidence`; the message
    names the certified ε, the claim, and the command that reproduces the
    audit (the same seed gives the same audit, whatever the machine's speed:
    `max_trials` alone sizes the rounds; `max_seconds` only warns when the
    audit took longer). With `replay`, the audit is `audit_replay` (the pair
    given, else the default pair and the bug hunter's neighbours, replayed
    at two runs each), its certificates `max_trials // REPLAY_CERTIFICATES`
    fresh outputs per dataset each; a mechanism that draws from outside the
    rng it is given is refused (`NotReplayable`, one sentence).

    Raises:
        PrivacyViolation: an `AssertionError`, so pytest and unittest report a failed test.
        InvalidParameterError: on bad input (one sentence), as `audit_mechanism`.
        MechanismError: when the mechanism crashes, as `audit_mechanism`.
    """
    if isinstance(max_seconds, bool) or not (isinstance(max_seconds, (int, float)) and max_seconds > 0):
        raise InvalidParameterError(
            f"The 'max_seconds' parameter of assert_private must be a positive number; got {max_seconds!r} instead."
        )
    if not isinstance(replay, bool):
        raise InvalidParameterError(f"The 'replay' parameter of assert_private must be True or False; got {replay!r:.40} instead.")
    start = time.perf_counter()
    if replay:
        result: AuditResult = _replayed(mechanism, d0, d1, confidence=confidence, max_trials=max_trials, seed=seed)
    else:
        result = audit_mechanism(mechanism, d0, d1, trials="auto", seed=seed, confidence=confidence,
                                 budget=AutoBudget(max_trials=max_trials))
    took = time.perf_counter() - start
    if took > max_seconds:
        warnings.warn(f"assert_private took {took:.0f} s, more than max_seconds={max_seconds:g}; pass a smaller "
                      f"max_trials (now {max_trials:,}) to keep the check fast.", stacklevel=2)
    if result.verdict == VIOLATION:
        raise PrivacyViolation(_message(mechanism, result, d0 is None and d1 is None), result)
    return result


def _replayed(mechanism: Mechanism, d0: Any, d1: Any, *, confidence: float, max_trials: int, seed: int) -> AuditResult:
    """Return `audit_replay` of the pair given (else of the default pair and the bug hunter's), `max_trials` split evenly
    over its certificates; sound as `audit_replay` is (every certificate at its share of β, on fresh draws)."""
    from dpaudit.audit.audits.replay import audit_replay

    max_trials = check_int(max_trials, "max_trials", "assert_private", low=10 * REPLAY_CERTIFICATES)
    return audit_replay(mechanism, d0, d1, trials=max_trials // REPLAY_CERTIFICATES, seed=seed, confidence=confidence,
                        search=d0 is None and d1 is None, certify=REPLAY_CERTIFICATES)


def _message(mechanism: Mechanism, result: AuditResult, default_pair: bool) -> str:
    """Return the failure message: what was certified against what was claimed, and how to reproduce it."""
    lb = result.lower_bound
    lines = [
        f"{mechanism.name} breaks its claim {result.claim.describe()}: with confidence {lb.confidence:g}, its ε is at least "
        f"{lb.epsilon:.4f} at δ = {lb.delta:g} ({lb.method}, test {result.test}).",
        f"Reproduce: {_reproduce(mechanism, result, default_pair)}",
    ]
    return "\n".join(lines)


def _registered_inputs(mechanism: Mechanism) -> dict[str, Any] | None:
    """Return the factory parameters that rebuild `mechanism` from the registry, or None when it is not a registered build.

    A user's mechanism may carry a registered name; it is the registry's only when its factory, given the
    parameters it reports, builds the same claim, parameters and description.
    """
    if mechanism.name not in list_mechanisms():
        return None
    accepted = inspect.signature(factory(mechanism.name)).parameters  # params may also hold facts, not inputs
    inputs = {k: v for k, v in mechanism.params.items() if k in accepted}
    try:
        rebuilt = get_mechanism(mechanism.name, **inputs)
        same = bool((rebuilt.claim, dict(rebuilt.params), rebuilt.description)
                    == (mechanism.claim, dict(mechanism.params), mechanism.description))
    except Exception:  # noqa: BLE001 - a mechanism that cannot be rebuilt and compared is not one the CLI repeats
        return None
    return inputs if same else None


def _reproduce(mechanism: Mechanism, result: AuditResult, default_pair: bool) -> str:
    """Return the command that repeats the audit: the CLI for a built-in on its own pair, else this test."""
    confidence = result.lower_bound.confidence
    inputs = _registered_inputs(mechanism)
    replay = getattr(result, "replay", None)
    if replay is not None:
        trials = replay.certified[0].result.lower_bound.trials
        command, options = "replay", f"--search --trials {trials} --certify {REPLAY_CERTIFICATES}"
        call = (f"audit_replay(mechanism, d0, d1, trials={trials}, seed={result.seed}, confidence={confidence:g}, "
                f"search={default_pair}, certify={REPLAY_CERTIFICATES})")
    else:
        command, options = "audit", f"--trials auto --max-trials {result.phases.auto.max_trials}"
        call = (f"audit_mechanism(mechanism, d0, d1, trials='auto', seed={result.seed}, confidence={confidence:g}, "
                f"budget=AutoBudget(max_trials={result.phases.auto.max_trials}))")
    if default_pair and inputs is not None:
        params = " ".join(f"--param {shlex.quote(f'{k}={v!r}')}" for k, v in inputs.items())
        return " ".join(filter(None, [f"dpaudit {command} {mechanism.name}", params, options,
                                      f"--seed {result.seed} --confidence {confidence:g}"]))
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    return f"pytest {shlex.quote(test)}  (or {call})" if test else call
