"""Displays that say something: no tightness against a bound theory did not give, a bound of 0 said as nothing
certified, facts and counts that explain themselves, `dpaudit list` whole in a pipe."""

import json

import pytest
from dpaudit.attacks.games import MultiRun
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.results.render import fact_name, guesses_text
from dpaudit.audit.results.result import AuditResult, MembershipResult
from dpaudit.audit.theory.upper_bound import UpperBound
from dpaudit.mechanisms.base import Claim

CLAIM = Claim(1.0, 1e-5)


def _two_dataset(upper: UpperBound, epsilon: float = 9.55) -> AuditResult:
    lower = LowerBound(epsilon, 0.95, "test", delta=1e-5, trials=100)
    return AuditResult(mechanism="m", claim=CLAIM, upper_bound=upper, lower_bound=lower, seconds=0.0, seed=0)


@pytest.mark.parametrize("upper", [UpperBound(1.0, 1e-5, "claim"), UpperBound(float("inf"), 1e-5, "unknown")])
def test_an_upper_bound_that_is_only_the_claim_or_infinite_gives_no_tightness(upper):
    result = _two_dataset(upper)
    rows = dict(result.rows())
    assert result.tightness is None and result.to_dict()["tightness"] is None
    assert rows["tightness"] == "n/a" and rows["upper bound (theory)"].startswith("none known")
    assert _two_dataset(UpperBound(2.0, 1e-5, "pld"), 1.0).tightness == pytest.approx(0.5)


def test_a_bound_of_zero_says_that_nothing_was_certified():
    assert "Nothing was certified" in LowerBound(0.0, 0.95, "gdp", delta=1e-5).meaning()
    assert "ε' < 0" not in LowerBound(0.0, 0.95, "gdp", delta=1e-5).meaning()
    assert "for any ε' < 0.5" in LowerBound(0.5, 0.95, "gdp", delta=1e-5).meaning()


def test_a_bound_from_guesses_near_a_coin_says_the_leak_is_in_the_tail():
    assert "extreme scores" in guesses_text(2000, 2000, 1033, 1.2)
    assert "extreme scores" not in guesses_text(2000, 2000, 1033, 0.0)
    assert "extreme scores" not in guesses_text(200, 100, 95, 1.2)
    lower = LowerBound(1.2, 0.95, "threshold", delta=1e-5, trials=2000, correct=1033)
    result = MembershipResult(game=MultiRun.name, scorer="s", lower_bound=lower, seconds=0.0, seed=0, claim=CLAIM)
    assert "extreme scores" in dict(result.rows())["canaries / guesses / correct"]


def test_canary_magnitudes_are_explained():
    assert "clip norm" in fact_name("canary_magnitudes") and fact_name("runs_screened") == "runs screened"


def test_list_prints_every_description_whole_when_stdout_is_not_a_terminal(capsys):
    from dpaudit.audit.cli import main

    assert main(["list", "--json"]) == 0
    descriptions = [row["description"] for row in json.loads(capsys.readouterr().out)]
    assert main(["list"]) == 0
    table = capsys.readouterr().out
    assert "…" not in table and all(text in table for text in descriptions)
