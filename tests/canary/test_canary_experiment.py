"""`dpaudit experiment one-run`: idealized one-run bounds, sound and close to the published shape."""

import json

import pytest

from experiments import run_experiment
from experiments.one_run import EPSILONS, REFERENCE_M1000, gaussian_expected_correct, idealized_epsilon


def test_quick_run_writes_files_and_stays_below_the_truth(tmp_path):
    data = run_experiment("one-run", tmp_path, quick=True)
    assert (tmp_path / "one-run.png").stat().st_size > 0
    assert json.loads((tmp_path / "one-run.json").read_text())["idealized"] == data["idealized"]
    for kind, curves in data["idealized"].items():
        for values in curves.values():
            assert all(0.0 <= v <= e for v, e in zip(values, EPSILONS))
            assert values == sorted(values)  # more privacy loss, larger certified ε
        # More canaries certify more (same ε, same confidence).
        for i in range(len(EPSILONS)):
            assert curves["100"][i] <= curves["1000"][i] <= curves["10000"][i]


@pytest.mark.parametrize(("i", "epsilon"), list(enumerate(EPSILONS)))
def test_randomized_response_matches_the_reference_at_m_1000(i, epsilon):
    assert idealized_epsilon("randomized_response", epsilon, 1000) == pytest.approx(
        REFERENCE_M1000["randomized_response"][i], rel=0.05)


def test_expected_correct_guesses_are_chance_without_signal_and_all_with_a_huge_one():
    assert gaussian_expected_correct(0.0, 1000, 50, 50) == 50
    assert gaussian_expected_correct(20.0, 1000, 50, 50) == 100
