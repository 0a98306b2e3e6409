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
from dpaudit.attacks.features import as_matrix, common_dtype, is_categorical, row_keys
from dpaudit.attacks.output_scorers import (
    CategoryLogRatio,
    Coordinate,
    Logistic,
    LowBitsLogRatio,
    NaiveBayes,
    Scorer,
)
from dpaudit.attacks.sorted_quantiles import sorted_quantile
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
    s0, s1 = np.sort(scorer.score(out0)), np.sort(scorer.score(out1))
    cuts = np.concatenate([[-np.inf], _threshold_grid(np.sort(np.concatenate([s0, s1])))])
    above0 = 1.0 - np.searchsorted(s0, cuts, side="right") / len(s0)
    above1 = 1.0 - np.searchsorted(s1, cuts, side="right") / len(s1)
    # sign +1: S = {score > t}: FPR = P0(S), FNR = 1 − P1(S); sign −1 swaps the roles.
    fpr = np.concatenate([above0, 1.0 - above0])
    fnr = np.concatenate([1.0 - above1, above1])
    values = objective(fpr * len(s0), len(s0), fnr * len(s1), len(s1))
    best = int(np.argmax(values))
    sign = 1 if best < len(cuts) else -1
    t = cuts[best % len(cuts)]
    threshold = t if sign > 0 else -t
    if sign < 0:  # S = {score ≤ t} = {−score ≥ −t}; nudge so that `>` keeps the tie-included set.
        threshold = np.nextafter(-t, -np.inf)
    test = DistinguishingTest(scorer, float(threshold), sign)
    test = dataclasses.replace(test, texts=_texts_in(test, out0, out1))
    return Choice(test, float(fpr[best]), float(fnr[best]), float(values[best]), min(len(s0), len(s1)))


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
    n_unique = distinct_outputs(train0, train1)
    discrete = n_unique <= _max_categories(len(x0) + len(x1))
    scorers: list[Scorer] = []
    if discrete:
        scorers.append(CategoryLogRatio.fit(train0, train1))
    elif n_unique < len(x0) + len(x1):
        scorers.append(CategoryLogRatio.fit(train0, train1, min_count=2, name=ATOMS))
    if x0.shape[1] == 1:
        scorers = [Coordinate(0, "value"), *scorers, NaiveBayes.fit(train0, train1)]
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
    return len(np.unique(np.concatenate([row_keys(out0), row_keys(out1)])))


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
        return _simplest_best([best_threshold(s, out0, out1, objective) for s in few_category_scorers(out0, out1)])
    h0, h1 = len(out0) // 2, len(out1) // 2
    scorers = candidate_scorers(out0[:h0], out1[:h1])
    judged_by = {ATOMS: atom_objective or objective}
    return _simplest_best([best_threshold(s, out0[h0:], out1[h1:], judged_by.get(s.name, objective)) for s in scorers])


def _simplest_best(choices: list[Choice]) -> Choice:
    """Return the first choice within SIMPLER_BY (relative) of the best objective.

    Candidates are ordered from simplest and cheapest to score; preferring
    them on near-ties keeps the held-out phase fast and avoids choosing a
    flexible scorer for what is selection noise.
    """
    best = max(c.objective for c in choices)
    return next(c for c in choices if c.objective >= best - SIMPLER_BY * abs(best))
