"""The game objects: validated once at construction, frozen, and one sentence on bad input."""

import dataclasses

import pytest
from dpaudit.attacks.games import MultiRun, OneRun, game_from_name
from dpaudit.mechanisms import InvalidParameterError


def test_games_keep_what_they_are_given_and_are_frozen():
    assert MultiRun(50).runs == 50 and MultiRun.name == "multi-run"
    game = OneRun(300, guesses=(20, 5))
    assert (game.canaries, game.guesses, game.name) == (300, (20, 5), "one-run")
    with pytest.raises(dataclasses.FrozenInstanceError):
        game.canaries = 10


def test_guess_counts_default_to_the_estimators_rules_and_one_side_means_zero_on_the_other():
    assert OneRun.with_guesses(100, None, None).guesses is None
    assert OneRun.with_guesses(100, 7, None).guesses == (7, 0)
    assert OneRun.with_guesses(100, None, 3).guesses == (0, 3)


@pytest.mark.parametrize(("make", "message"), [
    (lambda: MultiRun(3), "'runs' parameter of MultiRun"),
    (lambda: MultiRun(2.5), "'runs' parameter of MultiRun"),
    (lambda: OneRun(1), "'canaries' parameter of OneRun"),
    (lambda: OneRun(10, guesses=(0, 0)), "at least one guess"),
    (lambda: OneRun(10, guesses=(1, 2, 3)), "a pair"),
    (lambda: OneRun(10, guesses=(-1, 2)), "k+"),
    (lambda: game_from_name("two-run"), "must be 'multi-run', 'one-run' or 'two-dataset'"),
])
def test_bad_games_are_refused_with_one_sentence(make, message):
    with pytest.raises(InvalidParameterError, match=message):
        make()


def test_games_are_found_by_their_names():
    assert game_from_name("multi-run") is MultiRun and game_from_name("one-run") is OneRun


def test_a_multi_run_canary_game_draws_each_runs_membership_by_a_fair_coin():
    import numpy as np
    from dpaudit.attacks.canary import membership_game, pair_canary
    from dpaudit.attacks.canary_scores import OutputStatistic
    from dpaudit.mechanisms import blackbox

    mech = blackbox(lambda d, rng, size: rng.normal(size=size), epsilon=1.0)
    canary = pair_canary([0.0], [0.0, 1.0])
    counts = [membership_game(mech, canary, runs=400, scorer=OutputStatistic(), rng=np.random.default_rng(s)).n_in
              for s in range(40)]
    assert len(set(counts)) > 5 and abs(np.mean(counts) - 200) < 4 * 10 / np.sqrt(40)  # Binomial(400, ½): sd 10
