"""The distinguishing test on two neighbouring datasets (Kairouz, Oh, Viswanath, ICML 2015).

`select_test` chooses a scorer and a threshold on selection samples only; the
returned `DistinguishingTest` is then frozen and applied to fresh samples, so
its error rates there are honest binomial proportions. The choice maximises an
`objective(fp, n0, fn, n1)` of the error counts on the selection samples,
supplied by the caller (the estimator's projected bound), so attacks never
compute ε themselves.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
from dpaudit.attacks.features import as_matrix, common_dtype, is_categorical, row_keys, small_range_counts
from dpaudit.attacks.output_scorers import (
    CategoryLogRatio,
    Coordinate,
    Logistic,
    LowBitsLogRatio,
    NaiveBayes,
    Scorer,
    bin_counts,
    key_counts,
    sorted_column_table,
)
from dpaudit.attacks.sorted_quantiles import merge_sorted, sorted_quantile
from dpaudit.mechanisms.outputs import texts_of

__all__ = [
    "FEW_CATEGORIES",
    "MAX_CATEGORIES",
    "Choice",
    "DistinguishingTest",
    "Objective",
    "best_threshold",
    "candidate_scorers",
    "distinct_outputs",
    "few_category_scorers",
    "is_discrete",
    "select_test",
]

Objective = Callable[[np.ndarray, int, np.ndarray, int], np.ndarray]
"""Ranks candidate tests by their error counts: non-increasing in each count, never NaN (as a bound is).

Only the first largest value is read, so an objective may leave candidates
that cannot reach it at −inf.
"""
Counted = tuple[np.ndarray, np.ndarray, np.ndarray]
"""Distinct outputs (one row each), and how many outputs on d0 and on d1 equal each."""
MAX_CATEGORIES = 4096
MAX_COORDINATES = 16
MAX_LOGISTIC_DIM = 512
TAIL_GRID = 256
SIMPLER_BY = 0.01
FEW_CATEGORIES = 64
FEW_MIN_COUNT = 10
PREFIX_PER_CATEGORY = 2
ATOMS = "atom-likelihood-ratio"
SHOWN_TEXTS = 4


@dataclasses.dataclass(frozen=True)
class DistinguishingTest:
    """Guess D1 when `sign * score(output) > threshold`; the rejection set S is where it guesses D1.

    `texts` names S when the outputs are texts (the selection's texts in S), since their codes mean nothing to a user.
    """

    scorer: Scorer
    threshold: float
    sign: int
    texts: tuple[str, ...] | None = None

    def rejects(self, outputs: np.ndarray) -> np.ndarray:
        """Return a boolean per output: True when the test guesses D1."""
        scores = self.scorer.score(outputs)
        return (scores if self.sign > 0 else -scores) > self.threshold

    def describe(self) -> str:
        """Return a short human description of the rejection set: the texts it holds when the outputs are text."""
        if self.texts:
            shown = ", ".join(repr(t) for t in self.texts[:SHOWN_TEXTS])
            more = f" and {len(self.texts) - SHOWN_TEXTS} more" if len(self.texts) > SHOWN_TEXTS else ""
            return f"output is {shown}" if len(self.texts) == 1 else f"output is one of {shown}{more}"
        op = ">" if self.sign > 0 else "<"
        return f"{self.scorer.name} {op} {self.sign * self.threshold:.6g}"


@dataclasses.dataclass(frozen=True)
class Choice:
    """A selected test with its rates on the `samples` selection outputs per dataset it was chosen on.

    `objective` is the value the choice maximised: a ranking, not a bound.
    """

    test: DistinguishingTest
    fpr: float
    fnr: float
    objective: float
    samples: int


def _threshold_grid(pooled: np.ndarray) -> np.ndarray:
    """Return candidate thresholds of the sorted scores `pooled`: every distinct score when few, else quantiles dense in both tails.

    The quantile levels are geometric in the tail probability (from 1/n to 1/2
    on each side), since the best tests of tight mechanisms sit in the tails.
    The quantiles are `numpy.quantile`'s, read off the sorted scores (`sorted_quantile`).
    """
    if len(pooled) and np.isnan(pooled[-1]):
        distinct = np.unique(pooled)
    else:
        distinct = pooled[np.concatenate([[True], pooled[1:] != pooled[:-1]])] if len(pooled) else pooled
    if len(distinct) <= 2 * TAIL_GRID:
        return distinct
    tail = np.geomspace(1.0 / len(pooled), 0.5, TAIL_GRID)
    return np.unique(sorted_quantile(pooled, np.concatenate([tail, 1.0 - tail])))


def best_threshold(scorer: Scorer, out0: np.ndarray, out1: np.ndarray, objective: Objective) -> Choice:
    """Return the threshold and direction on `scorer` maximising `objective` on these samples."""
    return _best_sorted(scorer, (np.sort(scorer.score(out0)), np.sort(scorer.score(out1))), out0, out1, objective)


def _best_sorted(scorer: Scorer, ranked: tuple[np.ndarray, np.ndarray], out0: np.ndarray, out1: np.ndarray,
                 objective: Objective) -> Choice:
    """Return `best_threshold`'s choice from `ranked`, the sorted scores of `out0` and of `out1`."""
    s0, s1 = ranked
    cuts = np.concatenate([[-np.inf], _threshold_grid(merge_sorted(s0, s1))])
    at_most = (np.searchsorted(s0, cuts, side="right"), np.searchsorted(s1, cuts, side="right"))
    return _best_cut(scorer, cuts, at_most, objective, out0, out1)


def _best_cut(scorer: Scorer, cuts: np.ndarray, at_most: tuple[np.ndarray, np.ndarray], objective: Objective,
              out0: np.ndarray, out1: np.ndarray) -> Choice:
    """Return the choice among the tests "score > cut" and "score ≤ cut" maximising `objective`.

    `at_most` holds, per cut, how many scores of `out0` and of `out1` are ≤ it.
    """
    n0, n1 = len(out0), len(out1)
    above0, above1 = 1.0 - at_most[0] / n0, 1.0 - at_most[1] / n1
    # sign +1: S = {score > t}: FPR = P0(S), FNR = 1 − P1(S); sign −1 swaps the roles.
    fpr = np.concatenate([above0, 1.0 - above0])
    fnr = np.concatenate([1.0 - above1, above1])
    judged = np.concatenate([np.ones(len(cuts), dtype=bool), ~_dominated(at_most, n0, n1)])
    values = np.full(len(fpr), -np.inf)
    values[judged] = objective(fpr[judged] * n0, n0, fnr[judged] * n1, n1)
    best = int(np.argmax(values))
    sign = 1 if best < len(cuts) else -1
    t = cuts[best % len(cuts)]
    threshold = t if sign > 0 else -t
    if sign < 0:  # S = {score ≤ t} = {−score ≥ −t}; nudge so that `>` keeps the tie-included set.
        threshold = np.nextafter(-t, -np.inf)
    test = DistinguishingTest(scorer, float(threshold), sign)
    test = dataclasses.replace(test, texts=_texts_in(test, out0, out1))
    return Choice(test, float(fpr[best]), float(fnr[best]), float(values[best]), min(n0, n1))


def _dominated(at_most: tuple[np.ndarray, np.ndarray], n0: int, n1: int) -> np.ndarray:
    """Return, per cut, True when the test "score ≤ cut" has more errors of one kind than some test "score > c" and no fewer of the other.

    Such a test cannot be the first best: an `Objective` is non-increasing
    in each count, and a count one whole error larger outweighs rounding,
    so the earlier test "score > c" scores at least as high (the tests
    "score > c" come first). Skipping it leaves the choice as it was.
    """
    plus_fp, plus_fn = n0 - at_most[0], at_most[1]  # errors of "score > cut": the first non-increasing, the second not decreasing
    minus_fp, minus_fn = at_most[0], n1 - at_most[1]
    first = np.searchsorted(-plus_fp, -minus_fp, side="left")  # the first "score > c" with no more false positives
    inside = first < len(plus_fp)
    at = np.minimum(first, len(plus_fp) - 1)
    fewer_fn = plus_fn[at] <= minus_fn
    strictly = (plus_fp[at] < minus_fp) | (plus_fn[at] < minus_fn)
    return inside & fewer_fn & strictly


def _best_threshold_levels(scorer: Scorer, scores: np.ndarray, counts: tuple[np.ndarray, np.ndarray],
                           out0: np.ndarray, out1: np.ndarray, objective: Objective) -> Choice:
    """Return `best_threshold(scorer, out0, out1, objective)` for a scorer that gives each output one of a few `scores`.

    `counts` holds how many outputs of `out0` and of `out1` score each of
    `scores`. The pooled sorted scores are then those few, each repeated,
    so the cuts are the distinct scores seen (at most 2·TAIL_GRID of them,
    which `_threshold_grid` keeps whole) and the counts at most each cut are
    sums of whole levels: the same numbers, and the same choice, as
    `best_threshold`, without scoring or sorting every output.
    """
    seen = counts[0] + counts[1] > 0
    if np.count_nonzero(seen) > 2 * TAIL_GRID:
        return best_threshold(scorer, out0, out1, objective)
    order = np.argsort(scores[seen], kind="stable")
    ranked = scores[seen][order]
    cuts = np.concatenate([[-np.inf], _threshold_grid(ranked)])
    below = np.searchsorted(ranked, cuts, side="right")
    at_most = tuple(np.concatenate([[0], np.cumsum(c[seen][order])])[below] for c in counts)
    return _best_cut(scorer, cuts, at_most, objective, out0, out1)


def _judge(scorer: Scorer, out0: np.ndarray, out1: np.ndarray, objective: Objective,
           ranked: tuple[np.ndarray, np.ndarray] | None) -> Choice:
    """Return `best_threshold(scorer, out0, out1, objective)`, read off `ranked` (the sorted outputs, single doubles) when it can.

    The value itself is the sorted outputs; naive Bayes on one coordinate
    scores each of its bins alike, and its bins' counts are read off them.
    """
    if ranked is None:
        return best_threshold(scorer, out0, out1, objective)
    if isinstance(scorer, Coordinate):
        return _best_sorted(scorer, ranked, out0, out1, objective)
    if isinstance(scorer, NaiveBayes) and len(scorer.edges) == 1:
        edges, ratio = scorer.edges[0], scorer.log_ratios[0]
        counts = (bin_counts(edges, ranked[0]), bin_counts(edges, ranked[1]))
        return _best_threshold_levels(scorer, np.zeros(len(ratio)) + ratio, counts, out0, out1, objective)
    return best_threshold(scorer, out0, out1, objective)


def _texts_in(test: DistinguishingTest, out0: np.ndarray, out1: np.ndarray) -> tuple[str, ...] | None:
    """Return the texts among the selection outputs that `test` rejects, or None unless every output is one text (coded)."""
    if out0.dtype.kind != "f" or np.prod(out0.shape[1:], dtype=int) != 1 or texts_of(out0.ravel()[:1]) is None:
        return None
    values = np.unique(np.concatenate([out0.ravel(), out1.ravel()]))
    texts = texts_of(values)
    if texts is None:
        return None
    inside = test.rejects(values.reshape(-1, *out0.shape[1:]))
    return tuple(sorted(t for t, i in zip(texts, inside) if i))


def candidate_scorers(train0: np.ndarray, train1: np.ndarray) -> list[Scorer]:
    """Return the scorers worth trying for this kind of output, fitted on the training part.

    Discrete outputs (at most MAX_CATEGORIES distinct values, each seen four
    times on average) get the likelihood-ratio table, which is optimal for
    them, and per-coordinate scores. Continuous outputs get a table of their repeated values (atoms),
    per-coordinate scores, naive Bayes and, for vectors, a logistic
    distinguisher. Exact doubles released as IEEE-754 bit patterns (uint64,
    the threat model of floating-point attacks) also get the low-bits table.
    """
    if is_categorical(train0):
        return [CategoryLogRatio.fit(train0, train1)]
    x0, x1 = as_matrix(train0), as_matrix(train1)
    n_unique, naive_bayes = _distinct_and_naive_bayes(train0, train1)
    discrete = n_unique <= _max_categories(len(x0) + len(x1))
    scorers: list[Scorer] = []
    if discrete:
        scorers.append(CategoryLogRatio.fit(train0, train1))
    elif n_unique < len(x0) + len(x1):
        scorers.append(CategoryLogRatio.fit(train0, train1, min_count=2, name=ATOMS))
    if x0.shape[1] == 1:
        scorers = [Coordinate(0, "value"), *scorers, naive_bayes or NaiveBayes.fit(train0, train1)]
        if not discrete and train0.dtype == np.uint64:
            scorers.append(LowBitsLogRatio.fit(train0, train1))
        return scorers
    gaps = np.abs(x1.mean(axis=0) - x0.mean(axis=0)) / (x0.std(axis=0) + x1.std(axis=0) + 1e-12)
    top = np.argsort(-gaps)[:MAX_COORDINATES]
    scorers += [Coordinate(int(j), f"coordinate[{j}]") for j in sorted(top)]
    if discrete:
        return scorers
    learned = [NaiveBayes.fit(train0, train1)]
    if x0.shape[1] <= MAX_LOGISTIC_DIM:
        learned.append(Logistic.fit(train0, train1))
    return scorers + learned


def _distinct_and_naive_bayes(train0: np.ndarray, train1: np.ndarray) -> tuple[int, NaiveBayes | None]:
    """Return `distinct_outputs` of the training outputs and, for single doubles, their `NaiveBayes`, from one sort.

    Single doubles are their own keys (`row_keys`) and their own naive
    Bayes coordinate, so both read the same sorted values; other outputs
    get (count, None), the scorer to be fitted as usual.
    """
    if train0.ndim != 1 or train0.dtype != np.float64 or train1.dtype != np.float64:
        return distinct_outputs(train0, train1), None
    a, b = np.sort(train0), np.sort(train1)
    pooled = merge_sorted(a, b)
    if not len(pooled) or np.isnan(pooled[-1]):  # numpy's unique counts NaNs as one value
        return distinct_outputs(train0, train1), None
    distinct = 1 + int(np.count_nonzero(pooled[1:] != pooled[:-1]))
    cuts, ratio = sorted_column_table(a, b, pooled)
    return distinct, NaiveBayes((cuts,), (ratio,))


def few_category_scorers(out0: np.ndarray, out1: np.ndarray) -> list[Scorer]:
    """Return the likelihood-ratio table fitted on all outputs, after the value itself for single numbers.

    The table keeps values seen at least FEW_MIN_COUNT times: a value seen
    twice, on one dataset only, has an extreme ratio by luck, and judged on
    the outputs it was fitted on it would win (a discrete Laplace audit
    certified 0.57 that way; `tests/attacks/test_few_categories.py`).
    Thresholds on the value are the Neyman–Pearson tests of monotone
    likelihood ratio laws (geometric, discrete Gaussian) and pool their
    rarely seen tail values.
    """
    table = CategoryLogRatio.fit(out0, out1, min_count=FEW_MIN_COUNT)
    single_number = not is_categorical(out0) and as_matrix(out0[:1]).shape[1] == 1
    return [Coordinate(0, "value"), table] if single_number else [table]


def distinct_outputs(out0: np.ndarray, out1: np.ndarray) -> int:
    """Return the number of distinct outputs (rows) among both samples."""
    out0, out1 = common_dtype(out0, out1)
    k0, k1 = row_keys(out0), row_keys(out1)
    counted = small_range_counts(k0, k1)
    return len(np.unique(np.concatenate([k0, k1]))) if counted is None else len(counted[0])


def _max_categories(n: int) -> int:
    """Return how many distinct values `n` outputs may show and still count as discrete (each seen 4 times on average)."""
    return min(MAX_CATEGORIES, n // 4)


def is_discrete(out0: np.ndarray, out1: np.ndarray) -> bool:
    """Return True for categories, and for numbers with few distinct values each seen several times on average.

    When the first PREFIX_PER_CATEGORY · limit outputs of each sample already
    show more distinct values than the limit, so do all of them: the answer
    is False without counting the rest.
    """
    if is_categorical(out0):
        return True
    limit = _max_categories(len(out0) + len(out1))
    head = PREFIX_PER_CATEGORY * (limit + 1)
    if len(out0) > head and distinct_outputs(out0[:head], out1[:head]) > limit:
        return False
    return distinct_outputs(out0, out1) <= limit


def select_test(
    out0: np.ndarray, out1: np.ndarray, *, objective: Objective, categories: int | None = None,
    atom_objective: Objective | None = None,
) -> Choice:
    """Return the best test for telling `out0` (from D0) from `out1` (from D1).

    The samples are split in halves: scorers are fitted on the first, the
    scorer and threshold are chosen on the second (a table fitted and judged
    on the same outputs would win by its own noise). Discrete outputs of at
    most FEW_CATEGORIES distinct values (`categories`, counted by the
    caller) are the exception: the likelihood-ratio table alone, the
    Neyman–Pearson family, is fitted and judged on all of them, since among
    its few thresholds the winner's curse is small, while halving doubles
    the variance of the order it sets and other scorers add candidates that
    win by noise (at 10⁶ selection outputs, halves missed sparse vector's
    rarest, best category in up to 6 runs of 20, the table on all outputs in
    at most 2; `benchmarks/discrete_selection.py`).
    The table of atoms (repeated values among continuous outputs) is judged
    by `atom_objective` when given: its few thresholds suffer little from
    the winner's curse, while a conservative objective ranks a rare atom that
    only one dataset produces far below what it would certify.
    The caller must estimate the chosen test's rates on samples that were
    not passed here.
    """
    if categories is not None and categories <= FEW_CATEGORIES:
        counted = _counted(out0, out1)
        return _simplest_best([best_threshold(s, out0, out1, objective) if counted is None
                               else _best_threshold_levels(s, s.score(counted[0]), counted[1:], out0, out1, objective)
                               for s in few_category_scorers(out0, out1)])
    h0, h1 = len(out0) // 2, len(out1) // 2
    scorers = candidate_scorers(out0[:h0], out1[:h1])
    judged_by = {ATOMS: atom_objective or objective}
    judge0, judge1 = out0[h0:], out1[h1:]
    doubles = judge0.ndim == 1 and judge0.dtype == np.float64 and judge1.dtype == np.float64
    ranked = (np.sort(judge0), np.sort(judge1)) if doubles else None
    return _simplest_best([_judge(s, judge0, judge1, judged_by.get(s.name, objective), ranked) for s in scorers])


def _counted(out0: np.ndarray, out1: np.ndarray) -> Counted | None:
    """Return the distinct outputs of integer samples with their counts (`Counted`), or None for other outputs.

    Integers only: equal integers are alike to the last bit, so every scorer
    gives their copies one score (doubles would leave −0.0 beside 0.0).
    """
    out0, out1 = common_dtype(out0, out1)
    if out0.dtype.kind not in "iu":
        return None
    keys, counts0, counts1 = key_counts(row_keys(out0), row_keys(out1))
    return keys.view(out0.dtype).reshape(len(keys), *out0.shape[1:]), counts0, counts1


def _simplest_best(choices: list[Choice]) -> Choice:
    """Return the first choice within SIMPLER_BY (relative) of the best objective.

    Candidates are ordered from simplest and cheapest to score; preferring
    them on near-ties keeps the held-out phase fast and avoids choosing a
    flexible scorer for what is selection noise.
    """
    best = max(c.objective for c in choices)
    return next(c for c in choices if c.objective >= best - SIMPLER_BY * abs(best))
