"""One result hierarchy: one verdict rule, the same summary in str(), and JSON keys that never change."""

import pytest
from dpaudit.attacks.games import MultiRun
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.results.result import AuditResult, MembershipResult, Result, refutes
from dpaudit.audit.theory.upper_bound import UpperBound
from dpaudit.mechanisms.base import Claim

CLAIM = Claim(1.0, 1e-5)
UPPER = UpperBound(2.0, 1e-5, "pld")
TWO_DATASET_KEYS = {"mechanism", "params", "claim", "upper_bound", "lower_bound", "verdict", "tightness", "seconds",
                    "seed", "test", "meaning"}
MEMBERSHIP_KEYS = {"game", "mechanism", "params", "claim", "upper_bound", "lower_bound", "estimator", "assumption",
                   "confidence", "canaries", "guesses", "correct", "scorer", "verdict", "seconds", "seed", "meaning"}


def _lower(epsilon: float, *, delta: float = 1e-5, assumption: str | None = None) -> LowerBound:
    return LowerBound(epsilon, 0.95, "test", delta=delta, trials=100, assumption=assumption)


def _membership(lower: LowerBound, claim: Claim | None = CLAIM) -> MembershipResult:
    return MembershipResult(game=MultiRun.name, scorer="s", lower_bound=lower, seconds=0.0, seed=0, claim=claim,
                            upper_bound=UPPER)


def _two_dataset(lower: LowerBound) -> AuditResult:
    return AuditResult(mechanism="m", claim=CLAIM, upper_bound=UPPER, lower_bound=lower, seconds=0.0, seed=0)


@pytest.mark.parametrize(("lower", "verdict"), [
    (_lower(0.5), "consistent"),
    (_lower(1.5), "violation"),
    (_lower(1.5, delta=0.0), "consistent"),
    (_lower(1.5, assumption="Gaussian trade-off"), "violation-under-assumption"),
])
def test_every_result_kind_follows_the_one_verdict_rule(lower, verdict):
    assert _membership(lower).verdict == _two_dataset(lower).verdict == verdict


def test_no_claim_no_verdict():
    assert _membership(_lower(5.0), claim=None).verdict is None


def test_tightness_is_lower_over_upper_and_none_when_the_upper_bound_says_nothing():
    assert _two_dataset(_lower(0.5)).tightness == pytest.approx(0.25)
    assert _membership(_lower(0.5), claim=None).tightness == pytest.approx(0.25)
    assert MembershipResult(game="multi-run", scorer="s", lower_bound=_lower(0.5), seconds=0, seed=0).tightness is None


@pytest.mark.parametrize("result", [_two_dataset(_lower(1.5)), _membership(_lower(1.5))])
def test_str_is_the_summary_and_shows_the_verdict_and_what_the_bound_means(result):
    assert isinstance(result, Result)
    text = str(result)
    assert text == result.summary() and "VIOLATION" in text and "not (ε', 1e-05)-DP" in text


def test_the_summary_is_text_in_jupyter_too(monkeypatch):
    import rich.console

    monkeypatch.setattr(rich.console, "_is_jupyter", lambda: True)
    assert rich.console.Console().is_jupyter
    result = _two_dataset(_lower(1.5))
    assert "VIOLATION" in result.summary() and str(result) == result.summary()


def test_json_keys_are_those_outside_code_relies_on():
    assert set(_two_dataset(_lower(1.0)).to_dict()) == TWO_DATASET_KEYS
    assert set(_membership(_lower(1.0)).to_dict()) == MEMBERSHIP_KEYS


def test_a_bound_at_a_smaller_delta_does_not_refute_the_claim():
    claim = Claim(1.0, 1e-3)
    assert not refutes(LowerBound(epsilon=2.0, confidence=0.95, method="x", delta=0.0), claim)
    assert refutes(LowerBound(epsilon=2.0, confidence=0.95, method="x", delta=1e-3), claim)
