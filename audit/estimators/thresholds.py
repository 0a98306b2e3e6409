"""ε lower bound from canary scores by thresholding, with the threshold choice paid for.

The test "guess IN (D1) when score ≥ t" has FPR = share of OUT scores ≥ t and
FNR = share of IN scores < t. Kairouz, Oh, Viswanath (ICML 2015, Thm 2.1) turn
the rates of any fixed test into an ε lower bound; Jagielski, Ullman, Oprea
(NeurIPS 2020) make it a confidence bound with Clopper–Pearson upper bounds.
A threshold picked by looking at the same scores is not fixed, so its choice
is paid for by one of four strategies, small frozen objects in the manner of
jax_privacy's auditing module, or by the best of several (`BestOf`, the
default: the dominating pair at 95% of β and the bands at 5%, `DEFAULT_SHARES`):

- `DominatingPair`: the threshold is chosen on all the
  canaries and the ratio of its two rates is tested, calibrated on the worst
  pair of score laws the null allows (`dominating_pair`, β/2 per direction).
- `SimultaneousBands`: upper bounds on FPR and FNR that hold for every
  threshold at once (`bands.rate_band`, β/2 per class), so the best
  threshold is chosen on all the canaries, with no split.
- `Split`: choose the threshold on a random selection part of the canaries,
  bound its rates on the other, untouched part (full β on one test).
- `Bonferroni`: evaluate K thresholds fixed in advance (given, or quantiles of
  a small selection part) on the estimation canaries and pay β/K for each.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable, Mapping, Union

import numpy as np
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.bands import calibrated_level, rate_band
from dpaudit.audit.estimators.clopper_pearson import epsilon_objective, rate_upper_bound
from dpaudit.audit.estimators.dominating_pair import ApproximateDP, Envelope, default_replicates, rank_test
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_delta, check_int, check_probability_open

__all__ = [
    "DEFAULT_BONFERRONI_COUNT",
    "DEFAULT_SHARES",
    "DEFAULT_STRATEGIES",
    "BestOf",
    "Bonferroni",
    "DominatingPair",
    "SimultaneousBands",
    "Split",
    "ThresholdStrategy",
    "ThresholdTest",
    "band_rate_bounds",
    "error_counts",
    "select_threshold",
    "tail_candidates",
    "threshold_lower_bound",
]

DEFAULT_BONFERRONI_COUNT = 20

RateObjective = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""`objective(fpr_upper, fnr_upper)`: one value per test from upper bounds on its rates, not clamped at 0.

A positive value is certified when the rate bounds hold; values ≤ 0
certify nothing but still rank tests, so candidates are never ranked on a
clamp that makes them all equal.
"""

CountBound = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float], np.ndarray]
"""`bound(fp, n0, fn, n1, beta)`: the objective at Clopper–Pearson bounds (β/2 per rate) of fixed tests."""


@dataclasses.dataclass(frozen=True)
class DominatingPair:
    """Choose the threshold on all the canaries; test its rates' ratio, calibrated on the null's worst pair.

    Each direction of the test (IN above the threshold, or OUT below it)
    gets β/2: the statistic is the best per-threshold ratio certificate, and
    its null distribution is drawn by Monte Carlo (`replicates` draws; by
    default 4000, or 20/level when that is more) from the dominating pair
    of (ε, δ)-DP or μ-GDP, which is exactly the worst case for it
    (`dominating_pair`). The bound depends on the generator
    passed to the estimator, as a split's does (see `select_threshold` for
    why it draws from a child stream).
    """

    replicates: int | None = None

    def __post_init__(self) -> None:
        if self.replicates is not None:
            check_int(self.replicates, "replicates", "DominatingPair")

    def describe(self) -> str:
        """Return a short label for reports."""
        return "dominating-pair"


@dataclasses.dataclass(frozen=True)
class SimultaneousBands:
    """Choose the threshold on all the canaries; bound its rates with bands valid for every threshold.

    Each class gets a one-sided exact band (`bands.rate_band`) at β/2, so
    with probability ≥ 1 − β (union bound; no independence between the
    classes is needed) every threshold's FPR and FNR lie below their band
    values, whichever threshold the data then favour.
    """

    def describe(self) -> str:
        """Return a short label for reports."""
        return "simultaneous-bands"


@dataclasses.dataclass(frozen=True)
class Split:
    """Choose the threshold on `fraction` of the canaries; bound its rates on the rest."""

    fraction: float = 0.5

    def __post_init__(self) -> None:
        check_probability_open(self.fraction, "fraction", "Split")

    def describe(self) -> str:
        """Return a short label for reports."""
        return f"split({self.fraction:g})"


@dataclasses.dataclass(frozen=True)
class Bonferroni:
    """Evaluate K thresholds fixed before the estimation scores are seen; pay β/K each.

    Give either `thresholds` (a grid chosen without looking at the scores;
    all canaries then estimate) or `count` = K (the grid is K quantiles of
    the pooled scores of a random `fraction` of the canaries, at levels
    evenly spaced in logit so that both tails are covered; those canaries are
    then left out of the estimation). With neither, K = DEFAULT_BONFERRONI_COUNT.
    """

    thresholds: tuple[float, ...] = ()
    count: int = 0
    fraction: float = 0.1

    def __post_init__(self) -> None:
        if not len(self.thresholds) and not self.count:
            object.__setattr__(self, "count", DEFAULT_BONFERRONI_COUNT)
        try:
            grid = tuple(float(t) for t in np.asarray(self.thresholds, dtype=float).reshape(-1))
        except (TypeError, ValueError):
            raise InvalidParameterError("Bonferroni needs numeric thresholds.") from None
        object.__setattr__(self, "thresholds", grid)
        if bool(grid) == bool(self.count):
            raise InvalidParameterError(
                "Bonferroni needs either a grid of 'thresholds' or a 'count' of quantile "
                "thresholds, not both."
            )
        if grid and not np.all(np.isfinite(grid)):
            raise InvalidParameterError("Bonferroni needs finite thresholds.")
        if self.count:
            check_int(self.count, "count", "Bonferroni")
        check_probability_open(self.fraction, "fraction", "Bonferroni")

    @property
    def size(self) -> int:
        """Return K, the number of thresholds paid for."""
        return len(self.thresholds) or self.count

    def describe(self) -> str:
        """Return a short label for reports."""
        if self.thresholds:
            return f"bonferroni({self.size} fixed thresholds)"
        return f"bonferroni({self.count} quantiles of {self.fraction:g})"


Strategy = Union[DominatingPair, SimultaneousBands, Split, Bonferroni]

DEFAULT_STRATEGIES: tuple[Strategy, ...] = (DominatingPair(), SimultaneousBands())
DEFAULT_SHARES = (0.95, 0.05)
"""The default `BestOf`'s shares of β (the dominating pair's, the bands'), fixed before any game and whatever
the number of scores. Most goes to the dominating pair, whose bound drops quickly as its share shrinks; a small
share keeps the bands, whose bound barely moves with β, so the default keeps what they certify at any size.
Measured on the suite's canary targets at 10³ to 10⁶ runs against each strategy alone and against equal shares
(`benchmarks/default_strategy.py`; docs/numbers.md, "What the default strategy costs")."""


@dataclasses.dataclass(frozen=True)
class BestOf:
    """Certify with each strategy at its share of β and report the highest bound (union bound).

    Each strategy's bound fails with probability at most its share, so all
    hold together with probability ≥ 1 − β when the shares sum to at most
    1, and the highest of them with it. The default, the dominating pair
    and the simultaneous bands at `DEFAULT_SHARES` of β, is never below
    what either certifies alone at its share: the bands bound every
    threshold's rates whatever the sample size, where the dominating pair's
    test is the stronger of the two on most laws.

    Attributes:
        strategies: the strategies tried (none of them a `BestOf`).
        shares: each one's share of β; None: `DEFAULT_SHARES` for the
            default strategies, equal shares for any others.
    """

    strategies: tuple[Strategy, ...] = DEFAULT_STRATEGIES
    shares: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        kinds = (DominatingPair, SimultaneousBands, Split, Bonferroni)
        if not self.strategies or not all(isinstance(s, kinds) for s in self.strategies):
            raise InvalidParameterError(
                "The 'strategies' parameter of BestOf must be DominatingPair, SimultaneousBands, Split or Bonferroni "
                f"objects; got {self.strategies!r} instead."
            )
        shares = self.weights()
        if len(shares) != len(self.strategies) or any(not 0.0 < w <= 1.0 for w in shares) or sum(shares) > 1.0 + 1e-12:
            raise InvalidParameterError(
                f"The 'shares' parameter of BestOf must give each strategy a share in (0, 1], summing to at most 1; "
                f"got {self.shares!r} instead."
            )

    def weights(self) -> tuple[float, ...]:
        """Return each strategy's share of β: as given, else `DEFAULT_SHARES` for the default strategies, else equal."""
        if self.shares is not None:
            return tuple(self.shares)
        if self.strategies == DEFAULT_STRATEGIES:
            return DEFAULT_SHARES
        return (1.0 / len(self.strategies),) * len(self.strategies)

    def describe(self) -> str:
        """Return a short label for reports."""
        return "best of " + ", ".join(f"{s.describe()} (β·{w:.3g})" for s, w in zip(self.strategies, self.weights()))


ThresholdStrategy = Union[Strategy, BestOf]


@dataclasses.dataclass(frozen=True)
class ThresholdTest:
    """The threshold test an estimator settled on, with the counts its bound used.

    `value` is the certified bound of the test (ε or μ, per the estimator),
    computed from (fp of n0, fn of n1) with failure probability `beta`;
    `tried` thresholds were paid for; `method` names the bound in reports.
    """

    threshold: float
    value: float
    fp: int
    n0: int
    fn: int
    n1: int
    beta: float
    tried: int
    strategy: str
    method: str = "clopper-pearson"
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def correct(self) -> int:
        """Return the guesses the test got right: OUT below the threshold and IN at or above it."""
        return self.n0 - self.fp + self.n1 - self.fn

    def details(self) -> dict[str, Any]:
        """Return the evidence for `LowerBound.details` (for bands, `beta_per_threshold` is each band's β/2)."""
        return {
            "threshold": self.threshold, "fp": self.fp, "n0": self.n0, "fn": self.fn,
            "n1": self.n1, "strategy": self.strategy, "thresholds_tried": self.tried,
            "beta_per_threshold": self.beta, **self.extra,
        }


def error_counts(obs: Observations, thresholds: Any) -> tuple[np.ndarray, int, np.ndarray, int]:
    """Return (fp, n0, fn, n1) of the tests "guess IN when score ≥ t", one per threshold.

    fp counts OUT canaries with score ≥ t among n0 OUT, fn counts IN canaries
    with score < t among n1 IN.
    """
    t = np.asarray(thresholds, dtype=float)
    out_sorted = np.sort(obs.out_scores)
    fn = np.searchsorted(np.sort(obs.in_scores), t, side="left")
    fp = out_sorted.size - np.searchsorted(out_sorted, t, side="left")
    return fp, obs.n_out, fn, obs.n_in


def select_threshold(
    obs: Observations,
    *,
    strategy: ThresholdStrategy,
    beta: float,
    rng: np.random.Generator,
    objective: RateObjective,
    envelope: Envelope,
) -> ThresholdTest:
    """Return the best threshold test under `strategy`; its value (clamped at 0) holds w.p. ≥ 1 − beta.

    `objective` turns rate bounds into the value and `envelope` names the
    same null for `DominatingPair`. Sound because the test is calibrated on
    the null's worst pair (`DominatingPair`), or every threshold's rate
    bounds hold at once (`SimultaneousBands`), or the reported bound comes
    from canaries not used to choose the threshold (`Split`), or it is the
    maximum of K bounds each at β/K on thresholds fixed before the
    estimation scores (`Bonferroni`, union bound).

    Every strategy's randomness (a split, the test's tie-breaking and Monte
    Carlo replicates) must be independent of the scores. It is drawn from a
    child stream of `rng` (`Generator.spawn`), so an estimator given the seed
    that also drew the scores does not reuse those draws.
    """
    obs.require_both_classes("A threshold estimator")
    if isinstance(strategy, BestOf):
        return _best_of(obs, strategy, beta, rng, objective, envelope)
    rng = rng.spawn(1)[0]
    if isinstance(strategy, DominatingPair):
        return _dominating_pair_test(obs, strategy, beta, rng, envelope)
    if isinstance(strategy, SimultaneousBands):
        return _band_test(obs, strategy, beta, objective)
    bound = _clopper_pearson(objective)
    if isinstance(strategy, Split):
        return _split_test(obs, strategy, beta, rng, bound)
    if isinstance(strategy, Bonferroni):
        return _bonferroni_test(obs, strategy, beta, rng, bound)
    raise InvalidParameterError(
        "The 'strategy' parameter must be a BestOf, a DominatingPair, a SimultaneousBands, a Split or a Bonferroni; "
        f"got {strategy!r} instead."
    )


def _best_of(obs: Observations, strategy: BestOf, beta: float, rng: np.random.Generator, objective: RateObjective,
             envelope: Envelope) -> ThresholdTest:
    """Return the highest of the strategies' tests, each at its share of β.

    Each strategy gets a copy of `rng`, so each draws exactly what it would
    draw alone with the same generator: the default is never below either
    strategy run alone at its share (the union bound needs no independence).
    """
    tests = [select_threshold(obs, strategy=s, beta=beta * w, rng=copy.deepcopy(rng), objective=objective, envelope=envelope)
             for s, w in zip(strategy.strategies, strategy.weights())]
    best = max(tests, key=lambda test: test.value)
    tried = {test.strategy: test.value for test in tests}
    return dataclasses.replace(best, strategy=strategy.describe(), extra={**best.extra, "chosen": best.strategy, "tried": tried})


def _clopper_pearson(objective: RateObjective) -> CountBound:
    def bound(fp, n0, fn, n1, beta):
        return objective(rate_upper_bound(fp, n0, beta / 2), rate_upper_bound(fn, n1, beta / 2))

    return bound


def band_rate_bounds(fp: Any, n0: int, fn: Any, n1: int, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Return upper bounds on (FPR, FNR) of threshold tests from their counts, valid for every threshold at once.

    `fp` of the `n0` D0 outputs (OUT scores) are on the guessed-D1 side of
    each threshold and `fn` of the `n1` D1 outputs are not. Each class gets
    a one-sided band (`bands.rate_band`) at β/2, so with probability ≥ 1 − β
    every threshold's two rates lie below these values, whichever thresholds
    are then looked at; the classes need not be independent (union bound).
    """
    return rate_band(n0, beta / 2)[np.asarray(fp)], rate_band(n1, beta / 2)[np.asarray(fn)]


def _dominating_pair_test(
    obs: Observations, strategy: DominatingPair, beta: float, rng: np.random.Generator, envelope: Envelope
) -> ThresholdTest:
    """Return the better of the two directions, each a `rank_test` at β/2, as a test "score ≥ t".

    IN above: the prefix "score ≥ t" holds n1 − fn IN and fp OUT scores.
    OUT below: the prefix "score ≤ s" of the negated scores holds n0 − fp OUT
    and fn IN scores; its test is "score ≥ t" at the next score t above s.
    When the prefix splits tied scores, the test is randomized at t (or s)
    and the counts are its own (`randomized_at_ties`).
    """
    n0, n1 = obs.n_out, obs.n_in
    replicates = strategy.replicates or default_replicates(beta / 2)
    common = dict(envelope=envelope, beta=beta / 2, replicates=replicates, rng=rng)
    above = rank_test(obs.in_scores, obs.out_scores, **common)
    below = rank_test(-obs.out_scores, -obs.in_scores, **common)
    if above.value >= below.value:
        threshold, fp, fn, best = above.threshold, above.low_count, n1 - above.high_count, above
    else:
        higher = obs.scores[obs.scores > -below.threshold]
        threshold = float(higher.min()) if higher.size else np.inf
        fp, fn, best = n0 - below.high_count, below.low_count, below
    return ThresholdTest(
        threshold=threshold, value=best.value, fp=fp, n0=n0, fn=fn, n1=n1, beta=beta / 2,
        tried=obs.size, strategy=strategy.describe(), method="dominating-pair",
        extra={"direction": "IN above" if best is above else "OUT below", "replicates": best.replicates,
               "checkpoints": best.checkpoints, "randomized_at_ties": best.splits_ties},
    )


def _band_test(
    obs: Observations, strategy: SimultaneousBands, beta: float, objective: RateObjective
) -> ThresholdTest:
    thresholds = np.unique(np.append(obs.scores, np.inf))
    fp, n0, fn, n1 = error_counts(obs, thresholds)
    fpr_upper, fnr_upper = band_rate_bounds(fp, n0, fn, n1, beta)
    values = np.asarray(objective(fpr_upper, fnr_upper))
    best = int(np.argmax(values))
    return ThresholdTest(
        threshold=float(thresholds[best]), value=max(float(values[best]), 0.0), fp=int(fp[best]),
        n0=n0, fn=int(fn[best]), n1=n1, beta=beta / 2, tried=thresholds.size,
        strategy=strategy.describe(), method="simultaneous-band",
        extra={"fpr_upper": float(fpr_upper[best]), "fnr_upper": float(fnr_upper[best]),
               "band_local_level": [calibrated_level(n0, beta / 2), calibrated_level(n1, beta / 2)]},
    )


def _split_test(
    obs: Observations, strategy: Split, beta: float, rng: np.random.Generator, bound: CountBound
) -> ThresholdTest:
    selection, estimation = _split_both(obs, strategy.fraction, rng)
    candidates = tail_candidates(selection.scores)
    fp, n0, fn, n1 = error_counts(selection, candidates)
    # Rank candidates by the bound they would get on the estimation part's
    # sizes at β/K, as if paid for: it discounts thresholds that look good by chance.
    m0, m1 = estimation.n_out, estimation.n_in
    predicted = bound(fp * (m0 / n0), np.full(fp.shape, m0), fn * (m1 / n1),
                      np.full(fn.shape, m1), beta / candidates.size)
    threshold = float(candidates[int(np.argmax(predicted))])
    return _evaluate(estimation, np.array([threshold]), beta, bound, strategy.describe())


def _bonferroni_test(
    obs: Observations, strategy: Bonferroni, beta: float, rng: np.random.Generator,
    bound: CountBound,
) -> ThresholdTest:
    if strategy.thresholds:
        grid, estimation = np.array(strategy.thresholds), obs
    else:
        selection, estimation = _split_both(obs, strategy.fraction, rng)
        grid = _tail_quantiles(selection.scores, strategy.count)
    return _evaluate(estimation, grid, beta / strategy.size, bound, strategy.describe(),
                     tried=strategy.size)


def tail_candidates(scores: np.ndarray, per_side: int = 400) -> np.ndarray:
    """Return candidate thresholds: scores at ranks geometrically spaced from each end.

    Large ε is certified in the tails, where single order statistics matter,
    so ranks are dense near both ends and sparse in the middle; at most
    2·`per_side` candidates keep the selection fast and limit over-fitting.
    """
    unique = np.unique(scores)
    ranks = np.unique(np.geomspace(1, unique.size, per_side).astype(int))
    return np.unique(np.concatenate([unique[ranks - 1], unique[unique.size - ranks]]))


def _tail_quantiles(scores: np.ndarray, count: int) -> np.ndarray:
    """Return `count` quantiles of `scores` at levels evenly spaced in logit from 1/n to 1 − 1/n.

    The spacing reaches into both tails, where large ε is certified. Each is
    a score (no interpolation), so ±inf scores never give a NaN threshold.
    """
    from scipy.special import expit

    n = scores.size
    if count == 1:
        return np.quantile(scores, [0.5], method="inverted_cdf")
    span = np.log(max(n - 1, 1))
    return np.quantile(scores, expit(np.linspace(-span, span, count)), method="inverted_cdf")


def _evaluate(
    obs: Observations, grid: np.ndarray, beta: float, bound: CountBound, label: str,
    tried: int = 1,
) -> ThresholdTest:
    fp, n0, fn, n1 = error_counts(obs, grid)
    values = np.asarray(bound(fp, np.full(fp.shape, n0), fn, np.full(fn.shape, n1), beta))
    best = int(np.argmax(values))
    return ThresholdTest(
        threshold=float(grid[best]), value=max(float(values[best]), 0.0), fp=int(fp[best]), n0=n0,
        fn=int(fn[best]), n1=n1, beta=beta, tried=tried, strategy=label,
    )


def _split_both(
    obs: Observations, fraction: float, rng: np.random.Generator
) -> tuple[Observations, Observations]:
    selection, estimation = obs.split(rng, fraction)
    selection.require_both_classes("The selection part of a split")
    estimation.require_both_classes("The estimation part of a split")
    return selection, estimation


def threshold_lower_bound(
    obs: Observations,
    *,
    delta: float,
    confidence: float = 0.95,
    strategy: ThresholdStrategy = BestOf(),
    rng: np.random.Generator | int,
) -> LowerBound:
    """Return the assumption-free (ε, δ) lower bound of the best threshold test on `obs`.

    With probability ≥ `confidence`, the mechanism that produced the scores is
    not (ε', δ)-DP for any ε' < the returned ε (β = 1 − confidence). By
    default (`BestOf`) the higher of two bounds at 0.95 β and 0.05 β: the threshold
    chosen on all the scores with the ratio of its rates tested against the
    (ε, δ)-DP envelope of Kairouz, Oh, Viswanath (ICML 2015, Thm 2.1),
    calibrated on its dominating pair (`dominating_pair`), and the
    simultaneous bands; the other strategies bound FPR and FNR separately:
    simultaneous bands, or Clopper–Pearson bounds at β/2 each after a split
    or a Bonferroni correction (Jagielski, Ullman, Oprea, NeurIPS 2020).
    Sound when the IN scores are i.i.d. and the OUT scores are i.i.d. draws
    of the mechanism's output on the two neighbouring inputs, as in a
    multi-run membership game.

    Args:
        obs: the scores (higher = member) with their truth.
        delta, confidence: of the bound.
        strategy: `BestOf` (default), `DominatingPair`, `SimultaneousBands`, `Split` or `Bonferroni`.
        rng: for the Monte Carlo replicates and the split strategies.

    Returns:
        A `LowerBound` (method "dominating-pair", "simultaneous-band", or "clopper-pearson" after a
        split or Bonferroni) naming the test and its counts.

    Raises:
        InvalidParameterError: for observations without both classes or bad parameters.
    """
    delta = check_delta(delta, "delta", "threshold_lower_bound")
    beta = 1.0 - check_probability_open(confidence, "confidence", "threshold_lower_bound")
    test = select_threshold(
        obs, strategy=strategy, beta=beta, rng=np.random.default_rng(rng),
        objective=lambda fpr, fnr: epsilon_objective(fpr, fnr, delta), envelope=ApproximateDP(delta),
    )
    return LowerBound(
        epsilon=test.value, confidence=confidence, method=test.method,
        delta=delta,
        trials=test.n0 + test.n1, fpr=test.fp / test.n0, fnr=test.fn / test.n1,
        details={"canaries": obs.size, **test.details()}, guesses=test.n0 + test.n1, correct=test.correct,
    )
