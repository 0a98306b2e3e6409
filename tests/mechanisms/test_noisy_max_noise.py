"""Report-noisy-max's noise has the Laplace law, and noisy max with its value, drawn group by group, has the law of
drawing every answer's noise (two-sample tests against numpy's Laplace)."""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.mechanisms.builtins.noisy_max import _noisy, _noisy_max

N = 200_000
SCALE = 2.0
P_MIN = 1e-4


def test_the_noise_is_laplace_of_the_scale():
    from scipy.stats import ks_2samp

    answers = np.array([0.0, 1.0, 2.0])
    noisy = _noisy(answers, 20.0, N, np.random.default_rng(1)) - answers
    reference = np.random.default_rng(2).laplace(0.0, 20.0, N)
    for j in range(len(answers)):
        assert ks_2samp(noisy[:, j], reference).pvalue > P_MIN
    assert ks_2samp(noisy[:, 0], np.random.default_rng(3).laplace(0.0, 21.0, N)).pvalue < P_MIN  # the test has power


def _every_answer(answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noisy = answers + rng.laplace(0.0, SCALE, (N, len(answers)))
    return np.column_stack([np.argmax(noisy, axis=1), noisy.max(axis=1)])


def _same_law(drawn: np.ndarray, reference: np.ndarray, m: int) -> float:
    """Return the smallest p-value, Bonferroni-adjusted, of: the value's KS test, the index's χ² test, each index's value KS test."""
    from scipy.stats import chi2_contingency, ks_2samp

    index = [np.bincount(out[:, 0].astype(int), minlength=m) for out in (drawn, reference)]
    seen = (index[0] + index[1]) > 0
    tests = [ks_2samp(drawn[:, 1], reference[:, 1]).pvalue, chi2_contingency(np.array(index)[:, seen]).pvalue]
    for j in np.flatnonzero(np.minimum(*index) > 100):
        tests.append(ks_2samp(drawn[drawn[:, 0] == j, 1], reference[reference[:, 0] == j, 1]).pvalue)
    return min(tests) * len(tests)  # Bonferroni over the tests


@pytest.mark.parametrize("answers", [[0.0] * 5, [1.0] * 3, [0.0, 1.0, 0.0, 3.0, 1.0], [0.0, 5.0, 2.0, 1.0, 7.0],
                                     [2.0, 2.0, -1.0, 2.0]])
def test_noisy_max_drawn_by_groups_has_the_law_of_every_answer_noised(answers):
    answers = np.array(answers)
    drawn = _noisy_max(answers, SCALE, N, np.random.default_rng(4))
    assert _same_law(drawn, _every_answer(answers, np.random.default_rng(5)), len(answers)) > P_MIN


def test_the_law_test_has_power():
    answers = np.array([0.0, 1.0, 0.0, 3.0, 1.0])
    shifted = _noisy_max(answers + 0.05 * SCALE, SCALE, N, np.random.default_rng(4))
    assert _same_law(shifted, _every_answer(answers, np.random.default_rng(5)), len(answers)) < P_MIN
    swapped = _noisy_max(answers[::-1], SCALE, N, np.random.default_rng(4))
    assert _same_law(swapped, _every_answer(answers, np.random.default_rng(5)), len(answers)) < P_MIN
