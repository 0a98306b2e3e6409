"""What an audit certifies, and the one function that turns any game's evidence into its lower bound.

`Bound(estimator, confidence, delta, strategy)` says how: the estimator
(None picks the evidence's assumption-free default), the confidence 1 − β,
the δ of the bound (None: the claim's), and the strategy: how a membership
threshold is paid for (`thresholds`: `BestOf` by default), or which
interval certifies a two-dataset test (`intervals`: `TwoRates` by default).
`certify(evidence, game, bound, ...)` is the only path from evidence to a
`LowerBound`, for two-dataset tests, canaries, saved scores, DP-SGD and
tracing alike. A new estimator is one entry of `ESTIMATORS`, keyed by the
evidence it reads and its name, with one signature
`estimate(evidence, game, bound, delta, rng) -> LowerBound`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Union

import numpy as np
from dpaudit.attacks.games import Game, MultiRun, OneRun, TwoDataset
from dpaudit.attacks.held_out_counts import HeldOutCounts
from dpaudit.attacks.observations import Observations
from dpaudit.attacks.output_histogram import OutputHistogram
from dpaudit.audit.estimators.gdp import gdp_from_counts, gdp_lower_bound
from dpaudit.audit.estimators.held_out import held_out_lower_bound
from dpaudit.audit.estimators.histogram_bands import histogram_gdp_bound, histogram_lower_bound
from dpaudit.audit.estimators.intervals import Interval, RatioInterval, TwoRates
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.one_run.binomial import one_run_lower_bound
from dpaudit.audit.estimators.one_run.fdp import one_run_fdp_lower_bound
from dpaudit.audit.estimators.thresholds import BestOf, ThresholdStrategy, threshold_lower_bound
from dpaudit.errors import InvalidParameterError
from dpaudit.validation import check_delta, check_probability_open

__all__ = ["ESTIMATORS", "MEMBERSHIP_ESTIMATORS", "Bound", "Estimator", "bounds_beside", "certify", "certify_best",
           "describe_estimators", "estimators_of"]

Evidence = Union[Observations, HeldOutCounts, OutputHistogram]
Estimate = Callable[[Any, Game, "Bound", float, np.random.Generator], LowerBound]


@dataclasses.dataclass(frozen=True)
class Estimator:
    """One entry of `ESTIMATORS`: the game whose evidence it certifies, whether its ε needs the Gaussian
    trade-off assumption, and the function itself."""

    game: type
    gaussian: bool
    estimate: Estimate


def _threshold(estimator: Callable[..., LowerBound]) -> Estimate:
    def estimate(obs: Observations, game: Game, spec: Bound, delta: float, rng: np.random.Generator) -> LowerBound:
        return estimator(obs, delta=delta, confidence=spec.confidence, strategy=spec.strategy or BestOf(), rng=rng)
    return estimate


def _one_run(estimator: Callable[..., LowerBound]) -> Estimate:
    def estimate(obs: Observations, game: Game, spec: Bound, delta: float, rng: np.random.Generator) -> LowerBound:
        guesses = None if game.guesses is None else [game.guesses]
        return estimator(obs, delta=delta, confidence=spec.confidence, guess_counts=guesses, rng=rng)
    return estimate


def _held_out(counts: HeldOutCounts, game: Game, spec: Bound, delta: float, rng: np.random.Generator) -> LowerBound:
    return held_out_lower_bound(counts, delta=delta, confidence=spec.confidence)


def _held_out_gdp(counts: HeldOutCounts, game: Game, spec: Bound, delta: float, rng: np.random.Generator) -> LowerBound:
    c = counts
    return gdp_from_counts(c.false_positives, c.n0, c.false_negatives, c.n1, delta=delta, confidence=spec.confidence)


def _bands(hist: OutputHistogram, game: Game, spec: Bound, delta: float, rng: np.random.Generator) -> LowerBound:
    return histogram_lower_bound(hist, delta=delta, confidence=spec.confidence)


def _bands_gdp(hist: OutputHistogram, game: Game, spec: Bound, delta: float, rng: np.random.Generator) -> LowerBound:
    return histogram_gdp_bound(hist, delta=delta, confidence=spec.confidence)


ESTIMATORS: dict[tuple[type, str], Estimator] = {
    (Observations, "threshold"): Estimator(MultiRun, False, _threshold(threshold_lower_bound)),
    (Observations, "gdp"): Estimator(MultiRun, True, _threshold(gdp_lower_bound)),
    (Observations, "one-run"): Estimator(OneRun, False, _one_run(one_run_lower_bound)),
    (Observations, "one-run-fdp"): Estimator(OneRun, True, _one_run(one_run_fdp_lower_bound)),
    (HeldOutCounts, "held-out"): Estimator(TwoDataset, False, _held_out),
    (HeldOutCounts, "gdp"): Estimator(TwoDataset, True, _held_out_gdp),
    (OutputHistogram, "bands"): Estimator(TwoDataset, False, _bands),
    (OutputHistogram, "gdp"): Estimator(TwoDataset, True, _bands_gdp),
}
"""(evidence type, name) → `Estimator`. For scores (`Observations`): "threshold" (Clopper–Pearson or
dominating-pair threshold tests, assumption-free) and "gdp" (Gaussian trade-off) for the multi-run game;
"one-run" (Steinke, Nasr, Jagielski, NeurIPS 2023, assumption-free) and "one-run-fdp" (Mahloujifar, Melis,
Chaudhuri, arXiv 2410.22235, Gaussian trade-off) for the one-run game. For a two-dataset test: "held-out"
(two rates, or one ratio, on held-out counts) or "bands" (every output counted), each with its "gdp" beside.
The first assumption-free estimator of an evidence type and game is its default."""

MEMBERSHIP_ESTIMATORS = tuple(name for kind, name in ESTIMATORS if kind is Observations)
"""The estimators of membership scores, by name (the CLI's --estimator)."""


def estimators_of(game: Game | type, evidence: type = Observations) -> tuple[str, ...]:
    """Return the names of the estimators that certify `evidence` of `game` (an instance or class), the default first."""
    kind = game if isinstance(game, type) else type(game)
    return tuple(name for (held, name), spec in ESTIMATORS.items() if held is evidence and spec.game is kind)


def describe_estimators(evidence: type = Observations) -> str:
    """Return the estimators of `evidence` in words, from `ESTIMATORS`: by game, its default, those that assume a
    Gaussian trade-off (the CLI's --estimator help and the CLI reference read it, so neither goes stale)."""
    games = dict.fromkeys(spec.game for (held, _), spec in ESTIMATORS.items() if held is evidence)
    parts = [f"{_listed(names, 'or')} ({game.name}; default {names[0]})"
             for game in games for names in [estimators_of(game, evidence)]]
    gaussian = [name for (held, name), spec in ESTIMATORS.items() if held is evidence and spec.gaussian]
    return ", ".join(parts) + (f"; {_listed(gaussian, 'and')} assume a Gaussian trade-off" if gaussian else "")


def _listed(names: list[str] | tuple[str, ...], last: str) -> str:
    """Return `names` as words: "a", "a or b", "a, b or c" (`last` the word before the last name)."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {last} {names[-1]}"


@dataclasses.dataclass(frozen=True)
class Bound:
    """How an audit's lower bound is certified.

    Attributes:
        estimator: a name of `ESTIMATORS` fitting the game's evidence; None:
            its assumption-free default.
        confidence: 1 − β, the probability that the bound holds.
        delta: δ of the bound; None: the claim's δ (0 without a claim).
        strategy: how a membership threshold is chosen and paid for (a
            `thresholds` strategy; None: `BestOf()`, the dominating pair and
            the simultaneous bands at `DEFAULT_SHARES` of β), or how a two-dataset test is
            certified (an `intervals` strategy; None: `TwoRates()`).
    """

    estimator: str | None = None
    confidence: float = 0.95
    delta: float | None = None
    strategy: ThresholdStrategy | Interval | None = None

    def __post_init__(self) -> None:
        names = {name for _, name in ESTIMATORS}
        if self.estimator is not None and self.estimator not in names:
            raise InvalidParameterError(
                f"The estimator must be one of {', '.join(sorted(names))}; got {self.estimator!r} instead."
            )
        object.__setattr__(self, "confidence", check_probability_open(self.confidence, "confidence", "Bound"))
        if self.delta is not None:
            object.__setattr__(self, "delta", check_delta(self.delta, name="delta", owner="Bound"))

    def interval(self) -> Interval:
        """Return the two-dataset interval: the strategy given, else `TwoRates()`.

        Raises:
            InvalidParameterError: when the strategy is a membership one.
        """
        strategy = self.strategy or TwoRates()
        if not isinstance(strategy, Interval.__args__):
            raise InvalidParameterError(
                f"A two-dataset audit's Bound takes TwoRates(), RatioInterval() or Bands() as its strategy; got {strategy!r}."
            )
        return strategy

    def estimator_for(self, game: Game, delta: float, evidence: type = Observations) -> str:
        """Return the estimator that certifies `evidence` of `game` at `delta`: the one named, or the default.

        Called before the game is played, so bad input fails before any run.

        Raises:
            InvalidParameterError: an estimator of another game or evidence, a
                GDP-based one at δ = 0 (the ε of μ-GDP is infinite there), or the
                ratio interval at δ > 0.
        """
        names = estimators_of(game, evidence)
        name = names[0] if self.estimator is None else self.estimator
        if name not in names:
            raise InvalidParameterError(
                f"The {game.name} game is certified by {' or '.join(names)}; got the estimator {name!r} instead."
            )
        if ESTIMATORS[(evidence, name)].gaussian and delta == 0.0:
            raise InvalidParameterError(
                f"The '{name}' estimator reports ε of μ-GDP at δ, which is infinite at δ = 0; pass a delta > 0 (e.g. 1e-5)."
            )
        if isinstance(self.strategy, RatioInterval) and delta > 0.0:
            raise InvalidParameterError(
                f"The ratio interval certifies pure ε only; audit at δ = 0 or use the two-rates interval (δ is {delta:g})."
            )
        return name

    def delta_for(self, claim_delta: float | None) -> float:
        """Return the δ of the bound: the one given, else the claim's, else 0."""
        if self.delta is not None:
            return self.delta
        return 0.0 if claim_delta is None else claim_delta


def certify(evidence: Evidence, game: Game, bound: Bound, *, delta: float, rng: np.random.Generator) -> LowerBound:
    """Return the lower bound on ε at `delta` that `bound`'s estimator certifies from the evidence of `game`,
    named by its estimator as `--estimator` spells it (`LowerBound.estimator`).

    Sound as the estimator is (see its docstring): with probability ≥
    `bound.confidence` the mechanism is not (ε', δ)-DP for ε' below it (the
    GDP-based estimators: under the Gaussian trade-off assumption they name).

    Raises:
        InvalidParameterError: as `Bound.estimator_for`.
    """
    kind = type(evidence)
    name = bound.estimator_for(game, delta, kind)
    return dataclasses.replace(ESTIMATORS[(kind, name)].estimate(evidence, game, bound, delta, rng), estimator=name)


def certify_best(arms: tuple[Observations, ...], game: Game, bound: Bound, *, delta: float,
                 rng: np.random.Generator) -> tuple[int, LowerBound]:
    """Return the index of the arm with the highest lower bound, each of the K arms certified at confidence 1 − β/K.

    Arms are the scores of K canaries played in the same runs (e.g. a
    ladder of canary magnitudes). Sound by the union bound: each arm's bound
    fails with probability at most β/K, so all hold together with
    probability ≥ 1 − β, whatever the dependence between arms, and the best
    of them with it.
    """
    split = dataclasses.replace(bound, confidence=1.0 - (1.0 - bound.confidence) / len(arms))
    bounds = [certify(arm, game, split, delta=delta, rng=rng) for arm in arms]
    best = int(np.argmax([b.epsilon for b in bounds]))
    method = f"{bounds[best].method}, best of {len(arms)} canaries (each at confidence {split.confidence:.4g})"
    return best, dataclasses.replace(bounds[best], confidence=bound.confidence, method=method)


def bounds_beside(evidence: Evidence, game: Game, bound: Bound, *, delta: float,
                  rng: np.random.Generator) -> tuple[LowerBound, ...]:
    """Return the bounds reported beside a two-dataset verdict's: the same evidence under the Gaussian assumption.

    The Gaussian-DP bound (Nasr et al. 2023) at δ > 0, at `bound`'s
    confidence and strategy: far tighter for Gaussian-like mechanisms,
    labelled with its assumption and never used for the verdict. At δ = 0 a
    GDP ε is infinite, so none is given. The one place this bound is built.
    """
    if delta == 0.0:
        return ()
    gaussian = Bound(estimator="gdp", confidence=bound.confidence, strategy=bound.strategy)
    return (certify(evidence, game, gaussian, delta=delta, rng=rng),)
