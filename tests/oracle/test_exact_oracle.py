"""The exact-ε oracle (`oracle_exact`): no constructor or transform lets a bound pass a pair's exact ε beyond β's rate.

Default run: every cell once at seed 0 (fast). Slow run: every cell over
`SLOW_SEEDS` seeds at ten times the trials. In both, any refused valid
pair, accepted invalid pair or accepted pair beyond the claim is a defect,
and the certified bounds above their pair's exact ε must stay within the
binomial's 0.999 quantile at the rate 1 − confidence = 0.05.
"""

import inspect
import math
import time

import oracle_exact as exact
import pytest
from dpaudit.audit.theory.profiles import gdp_epsilon
from scipy.stats import binom

FAST_TRIALS, SLOW_TRIALS, SLOW_SEEDS = 20_000, 200_000, 10
FAST_RUNS, SLOW_RUNS = 1000, 10_000


def _run(seeds: range, trials: int) -> tuple[list[str], int, int]:
    defects, audited, above = [], 0, 0
    for seed in seeds:
        for cell in exact.cells():
            for outcome in exact.play(cell, seed, trials):
                if outcome.defect:
                    defects.append(f"{cell.describe()} (seed {seed}): {outcome.defect}")
                if outcome.lower is not None:
                    audited += 1
                    above += outcome.lower > outcome.exact + 1e-6
    return defects, audited, above


def test_no_cell_refuses_a_valid_pair_accepts_an_invalid_one_or_passes_exact_epsilon_beyond_its_rate():
    defects, audited, above = _run(range(1), FAST_TRIALS)
    assert not defects, defects[:5]
    assert above <= binom.ppf(0.999, audited, 0.05)


@pytest.mark.slow
def test_the_grid_over_seeds_passes_exact_epsilon_at_most_at_its_rate():
    start = time.perf_counter()
    defects, audited, above = _run(range(SLOW_SEEDS), SLOW_TRIALS)
    print(f"exact-ε grid: {len(exact.cells())} cells x {SLOW_SEEDS} seeds, {audited} audits, {above} above the exact ε, "
          f"{time.perf_counter() - start:.0f} s")
    assert not defects, defects[:5]
    assert above <= binom.ppf(0.999, audited, 0.05)


def test_every_public_constructor_and_transform_is_a_cell_or_set_aside_with_a_reason():
    import dpaudit.mechanisms as mechanisms
    from dpaudit.mechanisms import transforms

    names = set(mechanisms.__all__) | set(transforms.__all__)
    played = set(exact.CONSTRUCTORS) | set(exact.TRANSFORMS)
    assert names - played - set(exact.SET_ASIDE) == set()
    assert all(exact.SET_ASIDE.values())
    for name in exact.TRANSFORMS:
        assert inspect.isfunction(getattr(transforms, name))


def test_the_exact_epsilon_of_known_laws():
    laplace = [exact.Law("laplace", 1.0, ((1.0, c),)) for c in (0.0, 0.7)]
    assert exact.exact_epsilon(*laplace, 0.0) == pytest.approx(0.7, abs=1e-6)
    assert exact.exact_epsilon(*laplace, 0.0, compositions=3) == pytest.approx(2.1, abs=1e-6)
    mixture = exact.Law("laplace", 1.0, ((0.5, 0.0), (0.5, 1.0)))  # Poisson subsampling at 1/2 of a 1-DP sum
    assert exact.exact_epsilon(laplace[0], mixture, 0.0) == pytest.approx(math.log(1 + 0.5 * (math.e - 1)), abs=1e-5)
    gaussian = [exact.Law("gaussian", 2.0, ((1.0, c),)) for c in (0.0, 1.0)]
    assert exact.exact_epsilon(*gaussian, 1e-5) == pytest.approx(gdp_epsilon(delta=1e-5, mu=0.5), abs=1e-4)
    assert exact.exact_epsilon(*gaussian, 1e-5, compositions=4) == pytest.approx(gdp_epsilon(delta=1e-5, mu=1.0), abs=1e-4)


def _run_valid(play, seeds: range, size: int, transforms: tuple) -> tuple[list[str], int, int]:
    """Return the defects, the audits and those above exact ε of `play(cell, seed, size)` on every cell with `transforms`."""
    defects, audited, above = [], 0, 0
    for seed in seeds:
        for cell in (c for c in exact.cells() if c.transform in transforms):
            outcome = play(cell, seed, size)
            if outcome is None:
                continue
            if outcome.defect:
                defects.append(f"{cell.describe()} (seed {seed}): {outcome.defect}")
                continue
            audited += 1
            above += outcome.lower > outcome.exact + 1e-6
    return defects, audited, above


def test_audit_replay_refuses_no_valid_pair_and_passes_exact_epsilon_at_most_at_its_rate():
    defects, audited, above = _run_valid(exact.play_replay, range(1), FAST_TRIALS, (None,))
    assert not defects, defects[:5]
    assert audited >= len(exact.targets()) and above <= binom.ppf(0.999, audited, 0.05)


@pytest.mark.slow
def test_audit_replay_over_every_cell_and_seed_passes_exact_epsilon_at_most_at_its_rate():
    defects, audited, above = _run_valid(exact.play_replay, range(SLOW_SEEDS), FAST_TRIALS, (None, *exact.TRANSFORMS))
    assert not defects, defects[:5]
    assert above <= binom.ppf(0.999, audited, 0.05)


def test_the_sequential_multi_run_game_refuses_no_valid_pair_and_passes_exact_epsilon_at_most_at_its_rate():
    defects, audited, above = _run_valid(exact.play_sequential_runs, range(1), FAST_RUNS, (None,))
    assert not defects, defects[:5]
    assert audited >= len(exact.targets()) and above <= binom.ppf(0.999, audited, 0.05)


@pytest.mark.slow
def test_the_sequential_multi_run_game_over_every_cell_and_seed_passes_exact_epsilon_at_most_at_its_rate():
    defects, audited, above = _run_valid(exact.play_sequential_runs, range(SLOW_SEEDS), SLOW_RUNS, (None, *exact.TRANSFORMS))
    assert not defects, defects[:5]
    assert above <= binom.ppf(0.999, audited, 0.05)


def test_the_sequential_default_of_an_expensive_mechanism_refuses_no_valid_pair_and_passes_exact_epsilon_at_most_at_its_rate():
    defects, audited, above = _run_valid(exact.play_default, range(1), FAST_TRIALS, (None,))
    assert not defects, defects[:5]
    assert audited >= len(exact.targets()) and above <= binom.ppf(0.999, audited, 0.05)


@pytest.mark.slow
def test_the_sequential_default_over_every_cell_and_seed_passes_exact_epsilon_at_most_at_its_rate():
    defects, audited, above = _run_valid(exact.play_default, range(SLOW_SEEDS), SLOW_TRIALS, (None, *exact.TRANSFORMS))
    assert not defects, defects[:5]
    assert above <= binom.ppf(0.999, audited, 0.05)
