"""Scorers added for the zoo: logistic quadratic form, atom table, low-bits table."""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.attacks.distinguish import candidate_scorers
from dpaudit.attacks.output_scorers import CategoryLogRatio, Logistic, LowBitsLogRatio, quadratic_features
from dpaudit.mechanisms.builtins.floating_point import as_bits
from sklearn.linear_model import LogisticRegression


@pytest.mark.parametrize("dim", [3, 40])
def test_logistic_quadratic_form_equals_the_fitted_model(dim: int) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(5000, dim)), rng.normal(size=(5000, dim)) * 1.3 + 0.1
    scorer = Logistic.fit(a, b)
    x, y = np.vstack([a, b]), np.repeat([0, 1], 5000)
    q = quadratic_features(x)
    mean, scale = q.mean(axis=0), q.std(axis=0) + 1e-12
    model = LogisticRegression(max_iter=300).fit((q - mean) / scale, y)
    expected = model.decision_function((quadratic_features(a[:50]) - mean) / scale)
    assert np.allclose(scorer.score(a[:50]), expected, atol=1e-8)


def test_atom_table_scores_a_repeated_value() -> None:
    rng = np.random.default_rng(1)
    out0, out1 = rng.laplace(size=6000), np.zeros(6000)  # more distinct values than MAX_CATEGORIES
    names = [s.name for s in candidate_scorers(out0, out1)]
    assert "atom-likelihood-ratio" in names
    atoms = CategoryLogRatio.fit(out0, out1, min_count=2)
    assert atoms.score(np.array([0.0]))[0] > 5 and atoms.score(np.array([0.123]))[0] == 0.0


def test_low_bits_table_only_for_exact_doubles() -> None:
    rng = np.random.default_rng(2)
    floats0, floats1 = rng.laplace(size=4000), 1.0 + rng.laplace(size=4000)
    assert not any(isinstance(s, LowBitsLogRatio) for s in candidate_scorers(floats0, floats1))
    assert any(isinstance(s, LowBitsLogRatio) for s in candidate_scorers(as_bits(floats0), as_bits(floats1)))
