"""Tracing scores: the formulas, matrix and paired forms agree, and members of an exact release stand out."""

import math

import numpy as np
import pytest
from dpaudit.attacks.tracing.data import column_biases, sample_rows
from dpaudit.attacks.tracing.scores import known_bias_score, reference_score, tardos_score
from dpaudit.mechanisms import InvalidParameterError


def _setup(n=100, d=2000, seed=0):
    rng = np.random.default_rng(seed)
    p = column_biases(d, rng=rng)
    rows = sample_rows(p, n, rng)
    return rng, p, rows, rows.mean(axis=0, dtype=float)


def test_known_bias_score_is_the_centred_inner_product():
    rng, p, rows, release = _setup(n=10, d=50)
    expected = (rows - p) @ (release - p)
    assert np.allclose(known_bias_score(p).matrix(release, rows)[0], expected)
    weights = 1 / np.sqrt(1 - p ** 2)
    assert np.allclose(tardos_score(p).matrix(release, rows)[0], ((rows - p) * weights) @ (release - p))


def test_matrix_and_paired_scores_agree():
    rng, p, rows, _ = _setup(n=20, d=40)
    releases = rng.normal(size=(20, 40))
    score = known_bias_score(p)
    assert np.allclose(np.diag(score.matrix(releases, rows)), score.paired(releases, rows))


def test_members_score_about_the_sum_of_variances_over_n_and_non_members_zero():
    n, d = 100, 4000
    rng, p, rows, release = _setup(n=n, d=d, seed=7)
    outsiders = sample_rows(p, n, rng)
    score = known_bias_score(p)
    members, others = score.matrix(release, rows)[0], score.matrix(release, outsiders)[0]
    expected = np.sum(1 - p ** 2) / n
    # A non-member's score has variance about Σ(1 − p²)²/n; the mean of n of them has sd ≈ that / √n.
    spread = math.sqrt(np.sum((1 - p ** 2) ** 2) / n) / math.sqrt(n)
    assert abs(others.mean()) < 5 * spread
    assert abs(members.mean() - expected) < 5 * spread + 0.1 * expected


def test_reference_score_centres_on_the_reference_rows_mean():
    rng, p, rows, release = _setup(n=10, d=30)
    reference = sample_rows(p, 4, rng)
    score = reference_score(reference)
    centre = reference.mean(axis=0)
    assert score.name == "reference (r = 4)"
    assert np.allclose(score.matrix(release, rows)[0], (rows - centre) @ (release - centre))


def test_wrong_width_is_one_sentence():
    _, p, rows, _ = _setup(n=5, d=10)
    with pytest.raises(InvalidParameterError, match="must have 10 columns"):
        known_bias_score(p).matrix(np.zeros(9), rows)
