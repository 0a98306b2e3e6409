"""What a membership audit certifies, and the one function that turns a game's scores into its lower bound.

`Bound(estimator, confidence, delta, strategy)` says how: the estimator
("threshold" or "gdp" for the multi-run game, "one-run" or "one-run-fdp"
for the one-run game; None picks the game's assumption-free default), the
confidence 1 − β, the δ of the bound (None: the claim's), and how a
multi-run threshold is paid for. `certify(obs, game, bound, ...)` is the
only path from `Observations` to a `LowerBound` for canaries, saved scores,
DP-SGD and tracing alike. A new estimator is one entry of `ESTIMATORS`.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
from dpaudit.attacks.games import Game, MultiRun, OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.gdp import gdp_lower_bound
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.one_run.binomial import one_run_lower_bound
from dpaudit.audit.estimators.one_run.fdp import one_run_fdp_lower_bound
from dpaudit.audit.estimators.thresholds import BestOf, ThresholdStrategy, threshold_lower_bound
from dpaudit.mechanisms.errors import InvalidParameterError
from dpaudit.mechanisms.validation import check_delta, check_probability_open

__all__ = ["ESTIMATORS", "Bound", "certify", "certify_best", "estimators_of"]


def _multi_run(estimator: Callable[..., LowerBound]) -> Callable[..., LowerBound]:
    def bound(obs: Observations, game: Game, spec: Bound, delta: float, rng: np.random.Generator) -> LowerBound:
        return estimator(obs, delta=delta, confidence=spec.confidence, strategy=spec.strategy, rng=rng)
    return bound


def _one_run(estimator: Callable[..., LowerBound]) -> Callable[..., LowerBound]:
    def bound(obs: Observations, game: Game, spec: Bound, delta: float, rng: np.random.Generator) -> LowerBound:
        guesses = None if game.guesses is None else [game.guesses]
        return estimator(obs, delta=delta, confidence=spec.confidence, guess_counts=guesses, rng=rng)
    return bound


ESTIMATORS: dict[str, tuple[type, bool, Callable[..., LowerBound]]] = {
    "threshold": (MultiRun, False, _multi_run(threshold_lower_bound)),
    "gdp": (MultiRun, True, _multi_run(gdp_lower_bound)),
    "one-run": (OneRun, False, _one_run(one_run_lower_bound)),
    "one-run-fdp": (OneRun, True, _one_run(one_run_fdp_lower_bound)),
}
"""Estimator name → (the game it certifies, whether its ε is that of μ-GDP, the bound).

"threshold": Clopper–Pearson or dominating-pair threshold test (assumption-free);
"gdp": Gaussian trade-off; "one-run": Steinke, Nasr, Jagielski (NeurIPS 2023,
assumption-free); "one-run-fdp": Mahloujifar, Melis, Chaudhuri (arXiv
2410.22235, Gaussian trade-off). The first estimator of each game is its default.
"""


def estimators_of(game: Game | type) -> tuple[str, ...]:
    """Return the names of the estimators that certify `game` (an instance or class), the default first."""
    kind = game if isinstance(game, type) else type(game)
    return tuple(name for name, (cls, _, _) in ESTIMATORS.items() if cls is kind)


@dataclasses.dataclass(frozen=True)
class Bound:
    """How a membership audit's lower bound is certified.

    Attributes:
        estimator: a name of `ESTIMATORS` fitting the game; None: the game's
            assumption-free default ("threshold" or "one-run").
        confidence: 1 − β, the probability that the bound holds.
        delta: δ of the bound; None: the claim's δ (0 without a claim).
        strategy: how a multi-run threshold is chosen and paid for
            (default: `BestOf`, the dominating pair and the simultaneous bands at β/2 each).
    """

    estimator: str | None = None
    confidence: float = 0.95
    delta: float | None = None
    strategy: ThresholdStrategy = BestOf()

    def __post_init__(self) -> None:
        if self.estimator is not None and self.estimator not in ESTIMATORS:
            raise InvalidParameterError(
                f"The estimator must be one of {', '.join(ESTIMATORS)}; got {self.estimator!r} instead."
            )
        object.__setattr__(self, "confidence", check_probability_open(self.confidence, "confidence", "Bound"))
        if self.delta is not None:
            object.__setattr__(self, "delta", check_delta(self.delta, name="delta", owner="Bound"))

    def estimator_for(self, game: Game, delta: float) -> str:
        """Return the estimator that certifies `game` at `delta`: the one named, or the game's default.

        Called before the game is played, so bad input fails before any run.

        Raises:
            InvalidParameterError: an estimator of the other game, or a
                GDP-based one at δ = 0 (the ε of μ-GDP is infinite there).
        """
        names = estimators_of(game)
        name = names[0] if self.estimator is None else self.estimator
        if name not in names:
            raise InvalidParameterError(
                f"The {game.name} game is certified by {' or '.join(names)}; got the estimator {name!r} instead."
            )
        if ESTIMATORS[name][1] and delta == 0.0:
            raise InvalidParameterError(
                f"The '{name}' estimator reports ε of μ-GDP at δ, which is infinite at δ = 0; pass a delta > 0 (e.g. 1e-5)."
            )
        return name

    def delta_for(self, claim_delta: float | None) -> float:
        """Return the δ of the bound: the one given, else the claim's, else 0."""
        if self.delta is not None:
            return self.delta
        return 0.0 if claim_delta is None else claim_delta


def certify(obs: Observations, game: Game, bound: Bound, *, delta: float, rng: np.random.Generator) -> LowerBound:
    """Return the lower bound on ε at `delta` that `bound`'s estimator certifies from the scores of `game`.

    Sound as the estimator is (see its docstring): with probability ≥
    `bound.confidence` the mechanism is not (ε', δ)-DP for ε' below it (the
    GDP-based estimators: under the Gaussian trade-off assumption they name).

    Raises:
        InvalidParameterError: as `Bound.estimator_for`.
    """
    return ESTIMATORS[bound.estimator_for(game, delta)][2](obs, game, bound, delta, rng)


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
