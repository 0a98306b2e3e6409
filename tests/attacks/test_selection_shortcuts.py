"""The selection's shortcuts choose what the plain computation chooses: same keys, counts, cuts and test.

Each shortcut (merged sorted runs, integer keys for one-number rows,
bincount for small integer ranges, whole levels of few-valued scores,
skipping dominated candidates) is checked against the computation it
replaces, on samples where they could disagree (zeros of both signs, NaNs,
negative and wide integers, both directions of the best test).
"""

from __future__ import annotations

import numpy as np
import pytest
from dpaudit.attacks.distinguish import (
    _simplest_best,
    best_threshold,
    candidate_scorers,
    distinct_outputs,
    few_category_scorers,
    select_test,
)
from dpaudit.attacks.features import row_keys
from dpaudit.attacks.output_scorers import Coordinate, NaiveBayes, key_counts
from dpaudit.attacks.selection_budget import SELECTION_LEVEL
from dpaudit.attacks.sorted_quantiles import merge_sorted
from dpaudit.audit.estimators.clopper_pearson import epsilon_lower_bound, rate_upper_bound
from dpaudit.audit.estimators.projection import projected_bound

OBJECTIVES = {"two-rates": projected_bound(90_000, 0.0, 0.05), "ratio": projected_bound(90_000, 0.0, 0.05, interval="ratio")}


def _every_bound(fp, n0, fn, n1):
    """The two-rates objective by its definition, every candidate computed."""
    fpr, fnr = rate_upper_bound(fp, n0, SELECTION_LEVEL), rate_upper_bound(fn, n1, SELECTION_LEVEL)
    return epsilon_lower_bound(fpr * 90_000, 90_000, fnr * 90_000, 90_000, beta=0.05)


PLAIN = {"two-rates": _every_bound, "ratio": OBJECTIVES["ratio"]}


def _facts(choice) -> tuple:
    return choice.test.scorer.name, choice.test.describe(), choice.test.threshold, choice.test.sign, choice.fpr, \
        choice.fnr, choice.objective, choice.samples


def _plain_best(scorer, out0, out1, objective) -> tuple:
    """Return (threshold, sign, objective value) of the best test, every candidate judged (no shortcut)."""
    s0, s1 = np.sort(scorer.score(out0)), np.sort(scorer.score(out1))
    cuts = np.concatenate([[-np.inf], np.unique(np.concatenate([s0, s1]))])
    if len(cuts) > 513:
        tail = np.geomspace(1.0 / (len(s0) + len(s1)), 0.5, 256)
        cuts = np.concatenate([[-np.inf], np.unique(np.quantile(np.concatenate([s0, s1]), np.concatenate([tail, 1 - tail])))])
    above0 = 1.0 - np.searchsorted(s0, cuts, side="right") / len(s0)
    above1 = 1.0 - np.searchsorted(s1, cuts, side="right") / len(s1)
    fpr, fnr = np.concatenate([above0, 1.0 - above0]), np.concatenate([1.0 - above1, above1])
    values = objective(fpr * len(s0), len(s0), fnr * len(s1), len(s1))
    best = int(np.argmax(values))
    sign = 1 if best < len(cuts) else -1
    t = cuts[best % len(cuts)]
    return (t if sign > 0 else np.nextafter(-t, -np.inf)), sign, values[best]


def test_merge_sorted_equals_sorting_the_concatenation():
    rng = np.random.default_rng(0)
    cases = [(rng.laplace(size=500), rng.laplace(size=300)), (rng.integers(-3, 4, 400).astype(float), rng.integers(0, 9, 200) * 1.0),
             (np.array([-0.0, 0.0, 1.0]), np.array([0.0, -0.0])), (np.array([1.0, np.nan]), np.array([0.5])),
             (np.empty(0), rng.normal(size=5)), (rng.integers(0, 5, 50), rng.integers(0, 5, 60))]
    for a, b in cases:
        merged, plain = merge_sorted(np.sort(a), np.sort(b)), np.sort(np.concatenate([a, b]))
        assert merged.tobytes() == plain.tobytes()  # bit for bit: −0.0 and NaN where numpy's sort puts them


@pytest.mark.parametrize("column", [
    np.array([3, -1, 3, 7, -1, 0]), np.array([0.0, -0.0, 1.5, np.nan, 1.5, np.nan]), np.array([1, 2, 2], dtype=np.uint8),
    np.array([True, False, True]),
])
def test_one_number_rows_are_keyed_as_their_bytes(column):
    """Integer keys of (n, 1) rows split the rows as their bytes (−0 made 0) do: the same classes, so the same counts."""
    rows = column.reshape(-1, 1)
    flat = np.ascontiguousarray(rows + 0.0 if rows.dtype.kind == "f" else rows)
    as_bytes = flat.view(np.dtype((np.void, flat.dtype.itemsize))).ravel()
    _, classes = np.unique(row_keys(rows), return_inverse=True)
    _, expected = np.unique(as_bytes, return_inverse=True)
    assert len(np.unique(classes)) == len(np.unique(expected))
    assert np.array_equal(classes[:, None] == classes[None, :], expected[:, None] == expected[None, :])


@pytest.mark.parametrize("k0, k1", [
    (np.array([5, -2, 5, 9]), np.array([-2, -2, 0])), (np.array([2**63 + 5, 2**63 + 1], dtype=np.uint64),
                                                        np.array([2**63 + 1], dtype=np.uint64)),
    (np.array([0, 10**12]), np.array([3])), (np.array([1.5, 0.5]), np.array([0.5])),
])
def test_key_counts_equal_unique_and_bincount(k0, k1):
    keys, inverse = np.unique(np.concatenate([k0, k1]), return_inverse=True)
    got = key_counts(k0, k1)
    assert got[0].dtype == keys.dtype and np.array_equal(got[0], keys)
    assert np.array_equal(got[1], np.bincount(inverse[: len(k0)], minlength=len(keys)))
    assert np.array_equal(got[2], np.bincount(inverse[len(k0):], minlength=len(keys)))


@pytest.mark.parametrize("interval", sorted(OBJECTIVES))
@pytest.mark.parametrize("shape", [(), (1,)])
def test_few_integer_outputs_choose_as_every_output_scored(interval, shape):
    rng = np.random.default_rng(1)
    objective = OBJECTIVES[interval]
    two_sided = [rng.geometric(0.4, 20_000) - rng.geometric(0.4, 20_000) for _ in range(2)]
    for out0, out1 in [(two_sided[0], two_sided[1] + 1),
                       (rng.integers(0, 2, 20_000), (rng.random(20_000) < 0.7).astype(int)),
                       (rng.integers(-5, 1, 9_000), rng.integers(-4, 1, 11_000))]:
        out0, out1 = out0.reshape(-1, *shape), out1.reshape(-1, *shape)
        categories = distinct_outputs(out0, out1)
        plain = _simplest_best([best_threshold(s, out0, out1, objective) for s in few_category_scorers(out0, out1)])
        assert _facts(select_test(out0, out1, objective=objective, categories=categories)) == _facts(plain)


@pytest.mark.parametrize("interval", sorted(OBJECTIVES))
def test_single_doubles_choose_as_every_candidate_judged(interval):
    """The value and naive Bayes read off one sort, dominated or hopeless candidates skipped: the choice of judging all."""
    rng = np.random.default_rng(2)
    objective = OBJECTIVES[interval]
    for out0, out1 in [(rng.laplace(0, 1, 20_000), rng.laplace(1, 1, 20_000)), (rng.normal(3, 1, 20_000), rng.normal(0, 1, 20_000)),
                       (rng.exponential(1, 16_000), rng.exponential(1.3, 24_000)), (np.round(rng.normal(size=20_000), 1),
                                                                                     np.round(rng.normal(0.2, 1, 20_000), 1))]:
        h0, h1 = len(out0) // 2, len(out1) // 2
        scorers = candidate_scorers(out0[:h0], out1[:h1])
        plain = _simplest_best([best_threshold(s, out0[h0:], out1[h1:], objective) for s in scorers])
        assert _facts(select_test(out0, out1, objective=objective)) == _facts(plain)
        for scorer in scorers:
            if isinstance(scorer, (Coordinate, NaiveBayes)):
                choice = best_threshold(scorer, out0[h0:], out1[h1:], objective)
                plain_best = _plain_best(scorer, out0[h0:], out1[h1:], PLAIN[interval])
                assert (choice.test.threshold, choice.test.sign, choice.objective) == plain_best


def test_single_doubles_fit_naive_bayes_and_count_distinct_as_before():
    rng = np.random.default_rng(3)
    out0, out1 = np.round(rng.laplace(size=5000), 3), np.round(rng.laplace(1, 1, 5000), 3)
    scorers = candidate_scorers(out0, out1)
    fitted, plain = scorers[-1], NaiveBayes.fit(out0, out1)
    assert all(np.array_equal(a, b) for a, b in zip(fitted.edges + fitted.log_ratios, plain.edges + plain.log_ratios))
    assert [s.name for s in scorers] == ["value", "atom-likelihood-ratio", "naive-bayes"]
    assert distinct_outputs(out0, out1) == len(np.unique(np.concatenate([out0, out1])))


def test_levels_no_output_scores_leave_no_cut():
    """A level that no output scores (a naive Bayes bin left empty) is not a cut, as it is not among the scores."""
    from dpaudit.attacks.distinguish import _best_threshold_levels

    rng = np.random.default_rng(4)
    out0, out1 = rng.choice([0.0, 1.0, 3.0], 3000, p=[0.5, 0.3, 0.2]), rng.choice([0.0, 1.0, 3.0], 3000, p=[0.3, 0.3, 0.4])
    levels = np.array([0.0, 1.0, 2.0, 3.0])
    counts = tuple(np.array([np.count_nonzero(out == v) for v in levels]) for out in (out0, out1))
    for objective in OBJECTIVES.values():
        got = _best_threshold_levels(Coordinate(), levels, counts, out0, out1, objective)
        assert _facts(got) == _facts(best_threshold(Coordinate(), out0, out1, objective))


def test_the_objective_computes_its_first_best_as_every_bound_would():
    """Candidates whose ceiling cannot reach the best get −inf; the first best, its index and value stay.

    The thresholds of a Laplace pair projected to few held-out trials put the
    best far down the order of ceilings (rank 20 at 10⁵ selection outputs
    and 1000 held-out ones), past the candidates computed first.
    """
    from scipy import stats

    cuts = np.linspace(-3, 8, 300)
    for n0, n in [(100_000, 1000), (10_000, 1000), (10_000, 90_000)]:
        fp, fn = np.round(n0 * stats.laplace.sf(cuts)), np.round(n0 * stats.laplace.cdf(cuts, loc=1))
        fpr, fnr = rate_upper_bound(fp, n0, SELECTION_LEVEL), rate_upper_bound(fn, n0, SELECTION_LEVEL)
        plain = epsilon_lower_bound(fpr * n, n, fnr * n, n, beta=0.05)
        got = projected_bound(n, 0.0, 0.05)(fp, n0, fn, n0)
        best = int(np.argmax(plain))
        assert int(np.argmax(got)) == best and got[best] == plain[best]
        assert np.all((got == plain) | (np.isneginf(got) & (plain < plain[best])))
