"""`audit_dpsgd(game=MultiRun(runs, sequential=True))`: a leaky loop caught early, runs kept and resumed, refusals."""

import importlib
import sys
from pathlib import Path

import pytest
from dpaudit.attacks.games import TRAINING_RUNS, MultiRun
from dpaudit.audit import Bound, Execution, audit_dpsgd
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import Claim
from dpaudit.mechanisms.dpsgd.accounting import poisson_event
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

sys.path.insert(0, str(Path(__file__).parents[3] / "docs" / "examples"))
loops = importlib.import_module("numpy_dpsgd")


def _loop(sigma: float, calls: list) -> UserTrainer:
    """A 3-step full-batch numpy DP-SGD loop with noise `sigma`, claiming (1.5, 1e-5) whatever its noise; counts its trainings."""
    train = loops.make_train(sigma=sigma, steps=3, rate=1.0)

    def counted(x, y, rng):
        calls.append(1)
        return train(x, y, rng)

    digits = load_data("digits")
    return UserTrainer(train=counted, losses=loops.losses, x=digits.x, y=digits.y, claim=Claim(1.5, 1e-5),
                       event=poisson_event(2.0, 1.0, 3))


def test_a_loop_with_almost_no_noise_is_caught_before_the_budget_and_a_resume_trains_nothing_again(tmp_path):
    calls = []
    game = MultiRun(400, sequential=True)
    first = audit_dpsgd(target=_loop(0.01, calls), game=game, dataset=2, seed=0,
                        execution=Execution(store=str(tmp_path)))
    assert first.verdict == "violation" and first.attack["stopped"] == "violation certified"
    assert first.lower_bound.trials < 400
    setup = len(calls) - first.lower_bound.trials  # trainings that craft the canaries, before the game
    resumed = []
    again = audit_dpsgd(target=_loop(0.01, resumed), game=game, dataset=2, seed=0,
                        execution=Execution(store=str(tmp_path), resume=True))
    assert len(resumed) == setup
    assert again.lower_bound.epsilon == first.lower_bound.epsilon


def test_the_runs_shorthand_and_refusals():
    with pytest.raises(InvalidParameterError, match="sequential"):
        audit_dpsgd(target=_loop(2.0, []), runs="sequential", bound=Bound(estimator="gdp"), dataset=2)
    calls = []
    res = audit_dpsgd(target=_loop(2.0, calls), game=MultiRun(40, sequential=True, give_up=False), dataset=2, seed=1)
    assert res.game_spec == MultiRun(40, sequential=True, give_up=False) and res.lower_bound.trials == 40
    assert res.verdict == "consistent"
    assert MultiRun(TRAINING_RUNS, sequential=True) == MultiRun(TRAINING_RUNS, sequential=True, give_up=True)


def test_left_out_the_game_is_sequential_and_says_why_unless_an_estimator_or_the_runs_are_given():
    from dpaudit.audit.audits.dpsgd import DEFAULT_WHY, _game

    default, why = _game(None, None, "audit_dpsgd", Bound())
    assert default == MultiRun(TRAINING_RUNS, sequential=True) and why == DEFAULT_WHY
    assert _game(None, TRAINING_RUNS, "audit_dpsgd", Bound()) == (MultiRun(TRAINING_RUNS), None)
    assert _game(None, None, "audit_dpsgd", Bound(estimator="gdp")) == (MultiRun(TRAINING_RUNS), None)
    res = audit_dpsgd(target=_loop(0.01, []), dataset=2, seed=0)
    assert res.game_spec == default and res.attack["default"] == DEFAULT_WHY
    assert res.verdict == "violation" and res.lower_bound.trials < TRAINING_RUNS


def test_the_planned_look_of_a_game_played_to_its_budget_reports_the_gdp_bound_beside():
    res = audit_dpsgd(target=_loop(2.0, []), game=MultiRun(40, sequential=True, give_up=False), dataset=2, seed=1)
    assert res.attack["stopped"] == "budget of runs"
    assert res.beside is not None and res.beside.assumption is not None
