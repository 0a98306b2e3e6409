"""Report-noisy-max's noise, drawn as a difference of exponentials, has the Laplace law (two-sample KS against numpy's Laplace)."""

from __future__ import annotations

import numpy as np
from dpaudit.mechanisms.builtins.noisy_max import _noisy

N = 200_000


def test_the_noise_is_laplace_of_the_scale():
    from scipy.stats import ks_2samp

    answers = np.array([0.0, 1.0, 2.0])
    noisy = _noisy(answers, 20.0, N, np.random.default_rng(1)) - answers
    reference = np.random.default_rng(2).laplace(0.0, 20.0, N)
    for j in range(len(answers)):
        assert ks_2samp(noisy[:, j], reference).pvalue > 1e-4
    assert ks_2samp(noisy[:, 0], np.random.default_rng(3).laplace(0.0, 21.0, N)).pvalue < 1e-4  # the test has power
