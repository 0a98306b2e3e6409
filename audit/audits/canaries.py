"""Canary audits: a membership game (multi-run or one-run) tied to an estimator.

Flow: build canaries for the mechanism → play the game → `Observations` →
estimator → `CanaryAuditResult` beside the theory upper bound. Seeds: one
`SeedSequence(seed)` spawned into independent streams for the canaries, the
game and the estimator, so the same seed gives the same result.

Games: `audit_canaries` (R runs, each with or without one canary — a fixed
canary, a fresh random canary per run, or the mechanism's own neighbouring
pair) with the threshold (Clopper–Pearson) or GDP estimator;
`audit_one_run` (m canaries each in with probability 1/2, one run) with the
one-run estimators of Steinke, Nasr, Jagielski (NeurIPS 2023) or
Mahloujifar, Melis, Chaudhuri (arXiv 2410.22235); `audit_observations` for
scores produced elsewhere.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Mapping, Sequence

import numpy as np
from dpaudit.attacks.canary import (
    CanarySet,
    category_canaries,
    fresh_canary_game,
    membership_game,
    pair_canary,
    sparse_canaries,
    vector_canaries,
)
from dpaudit.attacks.canary_scores import CanaryScorer, InnerProduct, OutputStatistic
from dpaudit.attacks.observations import Observations
from dpaudit.attacks.one_run_game import one_run_game
from dpaudit.audit.audits.two_dataset import theory_upper_bound
from dpaudit.audit.estimators.gdp import gdp_lower_bound
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.one_run.binomial import one_run_lower_bound
from dpaudit.audit.estimators.one_run.fdp import one_run_fdp_lower_bound
from dpaudit.audit.estimators.thresholds import DominatingPair, ThresholdStrategy, threshold_lower_bound
from dpaudit.audit.results.render import fmt, key_value_table, plain_text
from dpaudit.audit.results.result import CONSISTENT, VIOLATION, VIOLATION_UNDER_ASSUMPTION, refutes
from dpaudit.audit.theory.upper_bound import UpperBound
from dpaudit.mechanisms.base import Claim, Mechanism, Relation, check_pair
from dpaudit.mechanisms.errors import InvalidParameterError
from dpaudit.mechanisms.validation import check_delta, check_int, check_probability_open
from rich.table import Table

MULTI_RUN, ONE_RUN = "multi-run", "one-run"
MULTI_RUN_ESTIMATORS = ("threshold", "gdp")
ONE_RUN_ESTIMATORS = ("one-run", "one-run-fdp")
CANARY_MODES = ("auto", "fixed", "random", "pair")
DEFAULT_DIM = 1000
BASE_RECORDS = 100
@dataclasses.dataclass(frozen=True)
class CanaryAuditResult:
    """The bound of one canary audit, with the game, estimator and evidence behind it.

    `verdict`: None without a claim; "violation" when an assumption-free
    bound exceeds the claimed ε; "violation-under-assumption" when only a
    bound that needs an assumption (e.g. Gaussian trade-off) exceeds it;
    else "consistent". `observations` are the game's scores and truth (save
    them with `Observations.save`, re-audit them with `audit_observations`).
    `attack` holds facts about the attack beyond the game (e.g. a tracing
    attack's rows, columns and true-positive rate), reported when present.
    """

    game: str
    lower_bound: LowerBound
    scorer: str
    seconds: float
    seed: int
    mechanism: str | None = None
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    claim: Claim | None = None
    upper_bound: UpperBound | None = None
    observations: Observations | None = dataclasses.field(default=None, repr=False, compare=False)
    attack: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def estimator(self) -> str:
        """Return the estimator's name (the lower bound's method)."""
        return self.lower_bound.method

    @property
    def assumption(self) -> str | None:
        """Return the assumption the ε needs, or None when it is assumption-free."""
        return self.lower_bound.assumption

    @property
    def confidence(self) -> float:
        """Return the confidence of the bound."""
        return self.lower_bound.confidence

    @property
    def canaries(self) -> int:
        """Return the number of canaries scored (runs in a multi-run game)."""
        return int(self.lower_bound.details.get("canaries", self.lower_bound.trials))

    @property
    def guesses(self) -> int:
        """Return the number of membership guesses the bound counts (r = k+ + k−, or the held-out runs)."""
        return int(self.lower_bound.details.get("guesses", self.lower_bound.trials))

    @property
    def correct(self) -> int:
        """Return how many of those guesses were right."""
        details = self.lower_bound.details
        if "correct" in details:
            return int(details["correct"])
        return int(details.get("n0", 0) - details.get("fp", 0) + details.get("n1", 0) - details.get("fn", 0))

    @property
    def verdict(self) -> str | None:
        """Return the verdict against the claim (see the class docstring)."""
        if self.claim is None:
            return None
        if not refutes(self.lower_bound, self.claim):
            return CONSISTENT
        return VIOLATION_UNDER_ASSUMPTION if self.assumption else VIOLATION

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON of the audit; keys are only ever added."""
        return {
            "game": self.game, "mechanism": self.mechanism, "params": dict(self.params),
            "claim": self.claim.to_dict() if self.claim else None,
            "upper_bound": self.upper_bound.to_dict() if self.upper_bound else None,
            "lower_bound": self.lower_bound.to_dict(), "estimator": self.estimator,
            "assumption": self.assumption, "confidence": self.confidence, "canaries": self.canaries,
            "guesses": self.guesses, "correct": self.correct, "scorer": self.scorer,
            "verdict": self.verdict, "seconds": round(self.seconds, 4), "seed": self.seed,
            "meaning": self.lower_bound.meaning(),
            **({"attack": dict(self.attack)} if self.attack else {}),
        }

    def rows(self) -> list[tuple[str, str]]:
        """Return the audit as (field, value) rows: claim, bounds, estimator, evidence, verdict, provenance."""
        lb = self.lower_bound
        return [
            ("claim", self.claim.describe() if self.claim else "none given"),
            ("upper bound (theory)", f"ε = {fmt(self.upper_bound.epsilon)} [{self.upper_bound.method}]"
             if self.upper_bound else "n/a"),
            ("lower bound", f"ε = {lb.epsilon:.4f} at δ = {lb.delta:g}, confidence {lb.confidence:g}"),
            ("estimator", self.estimator),
            ("assumption", self.assumption or "none"),
            ("canaries / guesses / correct", f"{self.canaries:,} / {self.guesses:,} / {self.correct:,}"),
            ("scorer", self.scorer),
            *[(key.replace("_", " "), _text(value)) for key, value in self.attack.items()],
            ("verdict", _verdict_text(self.verdict)),
            ("seed / seconds", f"{self.seed} / {self.seconds:.2f}"),
        ]

    @property
    def title(self) -> str:
        """Return the title of the audit's table and report."""
        return f"dpaudit {self.game}: {self.mechanism or 'saved scores'}"

    def table(self) -> Table:
        """Return a rich table of the audit."""
        return key_value_table(self.title, self.rows(), self.lower_bound.meaning())

    def summary(self) -> str:
        """Return the audit as a plain-text table with the sentence of what the bound means."""
        return plain_text(self.table())


def _text(value: Any) -> str:
    return fmt(value) if isinstance(value, float) else str(value)


def _verdict_text(verdict: str | None) -> str:
    if verdict is None:
        return "n/a (no claim)"
    return verdict if verdict == CONSISTENT else verdict.upper()



def _canary_design(mech: Mechanism, m: int, *, dim: int | None, norm: float | None, rng: np.random.Generator) -> CanarySet:
    """Return m canaries fitting the records of `mech` (judged from its default pair and params).

    Category records (1-D integers, a `bins` parameter): one category per
    canary. Vector records (2-D numeric datasets, or no default pair at all):
    random ±norm/√dim vectors, or ±norm·e_i when the mechanism clips in ℓ1
    (`dim`; for a user's mechanism the width of its default pair's
    records, which a different `dim` may not contradict)
    (`clip_norm` = "l1"); norm defaults to the mechanism's `clip` (else 1);
    BASE_RECORDS null (zero) records are in every run, so that mechanisms
    whose noise depends on the dataset's size see a realistic one.
    Under replace-one an OUT canary's slot holds its negation (vectors) or a
    spare category.
    """
    replace = mech.claim.relation is Relation.REPLACE_ONE
    sample = None if mech.default_pair is None else np.asarray(mech.default_pair[0])
    if sample is not None and sample.ndim == 1 and np.issubdtype(sample.dtype, np.integer) and "bins" in mech.params:
        return category_canaries(m, bins=int(mech.params["bins"]), replace=replace)
    if sample is None or (sample.ndim == 2 and np.issubdtype(sample.dtype, np.number)):
        size = float(mech.params.get("clip", 1.0)) if norm is None else norm
        make = sparse_canaries if mech.params.get("clip_norm") == "l1" else vector_canaries
        design = make(m, dim=_record_width(mech, sample, dim), norm=size, rng=rng, replace=replace)
        return dataclasses.replace(design, base=np.zeros((BASE_RECORDS, design.records.shape[1])))
    raise InvalidParameterError(
        f"Mechanism '{mech.name}' takes neither vector nor category records, so dpaudit cannot make "
        "canaries for it; use the multi-run game on its neighbouring pair (canary='pair')."
    )


def _record_width(mech: Mechanism, sample: np.ndarray | None, dim: int | None) -> int:
    """Return the canaries' dimension: for a user's mechanism the width of its default pair's records, else `dim` or DEFAULT_DIM.

    Built-ins take vectors of any width (their default pairs are examples).
    """
    if sample is None or mech.buggy is not None:
        return DEFAULT_DIM if dim is None else dim
    width = int(sample.shape[1])
    if dim is not None and dim != width:
        raise InvalidParameterError(
            f"Mechanism '{mech.name}' takes records of {width} numbers, so canaries have dimension {width}; got dim={dim}."
        )
    return width


def seed_streams(seed: int) -> list[np.random.Generator]:
    """Return the three independent streams of an audit seeded `seed`: canaries (or data), game, estimator."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3)]


def _check_common(owner: str, mech: Mechanism, confidence: float, delta: float | None, seed: int):
    if not isinstance(mech, Mechanism):
        raise InvalidParameterError(
            f"{owner} needs a Mechanism; got {type(mech).__name__} (wrap a function with dpaudit.mechanisms.blackbox)."
        )
    confidence = check_probability_open(confidence, "confidence", owner)
    delta = mech.claim.delta if delta is None else check_delta(delta, owner)
    return confidence, delta, check_int(seed, "seed", owner, low=0)


def check_estimator(estimator: str, choices: Sequence[str], delta: float) -> None:
    """Raise unless `estimator` is one of `choices`, with δ > 0 for GDP-based ones (ε of μ-GDP is ∞ at δ = 0)."""
    if estimator not in choices:
        raise InvalidParameterError(
            f"The estimator must be one of {', '.join(choices)}; got {estimator!r} instead."
        )
    if estimator in ("gdp", "one-run-fdp") and delta == 0.0:
        raise InvalidParameterError(
            f"The '{estimator}' estimator reports ε of μ-GDP at δ, which is infinite at δ = 0; "
            "pass a delta > 0 (e.g. 1e-5)."
        )


def multi_run_bound(
    obs: Observations, *, estimator: str, delta: float, confidence: float,
    strategy: ThresholdStrategy, rng: np.random.Generator,
) -> LowerBound:
    """Return the bound of the multi-run `estimator` ("threshold": assumption-free; "gdp": Gaussian assumption)."""
    check_estimator(estimator, MULTI_RUN_ESTIMATORS, delta)
    bound = threshold_lower_bound if estimator == "threshold" else gdp_lower_bound
    return bound(obs, delta=delta, confidence=confidence, strategy=strategy, rng=rng)


def guess_counts_from(k_plus: int | None, k_minus: int | None) -> list[tuple[int, int]] | None:
    """Return [(k+, k−)] when either is given (the other 0), else None (the estimators' default rules)."""
    if k_plus is None and k_minus is None:
        return None
    return [(k_plus or 0, k_minus or 0)]


def one_run_bound(
    obs: Observations, *, estimator: str, delta: float, confidence: float,
    guess_counts: Sequence[tuple[int, int]] | None, rng: np.random.Generator,
) -> LowerBound:
    """Return the bound of the one-run `estimator` ("one-run": assumption-free; "one-run-fdp": Gaussian assumption)."""
    check_estimator(estimator, ONE_RUN_ESTIMATORS, delta)
    bound = one_run_lower_bound if estimator == "one-run" else one_run_fdp_lower_bound
    return bound(obs, delta=delta, confidence=confidence, guess_counts=guess_counts, rng=rng)


def _multi_run_observations(mech, mode, runs, scorer, dim, norm, canary_rng, game_rng):
    if mode == "auto":
        mode = "fixed" if _has_design(mech) else "pair"
    if mode == "pair":
        if mech.default_pair is None:
            raise InvalidParameterError(f"Mechanism '{mech.name}' has no default neighbouring pair to play on.")
        canary = pair_canary(*check_pair(mech, *mech.default_pair))
        chosen = scorer or OutputStatistic("sum")
        return membership_game(mech, canary, runs=runs, scorer=chosen, rng=game_rng), chosen
    chosen = scorer or InnerProduct()
    if mode == "fixed":
        canary = _canary_design(mech, 1, dim=dim, norm=norm, rng=canary_rng)
        return membership_game(mech, canary, runs=runs, scorer=chosen, rng=game_rng), chosen
    if mode == "random":
        def make(rng: np.random.Generator) -> CanarySet:
            return _canary_design(mech, 1, dim=dim, norm=norm, rng=rng)
        return fresh_canary_game(mech, make, runs=runs, scorer=chosen, rng=game_rng), chosen
    raise InvalidParameterError(f"The canary mode must be one of {', '.join(CANARY_MODES)}; got {mode!r} instead.")


def _has_design(mech: Mechanism) -> bool:
    try:
        _canary_design(mech, 1, dim=None, norm=None, rng=np.random.default_rng(0))
    except InvalidParameterError:
        return False
    return True


def audit_canaries(
    mech: Mechanism,
    *,
    runs: int,
    estimator: str = "threshold",
    canary: str = "auto",
    scorer: CanaryScorer | None = None,
    dim: int | None = None,
    norm: float | None = None,
    confidence: float = 0.95,
    delta: float | None = None,
    strategy: ThresholdStrategy = DominatingPair(),
    seed: int = 0,
) -> CanaryAuditResult:
    """Return the multi-run membership audit of `mech`: R runs, each with or without one canary.

    `canary`: "fixed" (one random canary of dimension `dim`, white-box
    inner-product score), "random" (a fresh canary each run), "pair" (the
    mechanism's default neighbouring pair, black-box score of the output's
    sum), "auto" (fixed when dpaudit can make canaries for the mechanism,
    else pair). The `estimator` ("threshold" or "gdp") pays for its threshold
    by `strategy`; with probability ≥ `confidence` the mechanism is not
    (ε', δ)-DP for ε' below the bound (GDP: under the Gaussian assumption).
    `delta` defaults to the claim's δ.

    Args:
        mech: the mechanism; runs: the number of runs R (half with the canary).
        estimator, canary, scorer: how the game is played and scored (see above).
        dim, norm: vector canaries' dimension and norm (default: the mechanism's).
        confidence, delta, strategy, seed: of the bound.

    Returns:
        A `CanaryAuditResult` with the game's observations.

    Raises:
        InvalidParameterError: on bad input (one sentence).
    """
    owner = "audit_canaries"
    confidence, delta, seed = _check_common(owner, mech, confidence, delta, seed)
    check_estimator(estimator, MULTI_RUN_ESTIMATORS, delta)
    runs = check_int(runs, "runs", owner, low=4)
    dim = None if dim is None else check_int(dim, "dim", owner)
    canary_rng, game_rng, estimator_rng = seed_streams(seed)
    start = time.perf_counter()
    obs, chosen = _multi_run_observations(mech, canary, runs, scorer, dim, norm, canary_rng, game_rng)
    bound = multi_run_bound(obs, estimator=estimator, delta=delta, confidence=confidence, strategy=strategy,
                            rng=estimator_rng)
    return audit_result(MULTI_RUN, bound, chosen.name, start, seed, mech, delta, obs)


def audit_one_run(
    mech: Mechanism,
    *,
    canaries: int,
    k_plus: int | None = None,
    k_minus: int | None = None,
    estimator: str = "one-run",
    scorer: CanaryScorer | None = None,
    dim: int | None = None,
    norm: float | None = None,
    confidence: float = 0.95,
    delta: float | None = None,
    seed: int = 0,
) -> CanaryAuditResult:
    """Return the one-run audit of `mech`: m canaries each in with probability 1/2, one run.

    Guesses: IN for the k+ highest scores, OUT for the k− lowest (fixed in
    advance); with neither given, the default rules of
    `one_run.rules.check_rules` are tried and paid for (weighted Bonferroni:
    1 − STOPPING_SHARE of β for balanced rules, STOPPING_SHARE for stopping
    rules that catch a leak of a few canaries). Estimator "one-run" (Steinke, Nasr,
    Jagielski 2023; assumption-free) or "one-run-fdp" (Mahloujifar, Melis,
    Chaudhuri 2024; ε under the Gaussian trade-off assumption). With
    probability ≥ `confidence` the mechanism is not (ε', δ)-DP with respect
    to one canary for ε' below the bound.

    Args:
        mech: the mechanism; canaries: m.
        k_plus, k_minus: the guess counts, fixed in advance (default: a few, paid for).
        estimator, scorer, dim, norm: how the game is scored.
        confidence, delta, seed: of the bound.

    Returns:
        A `CanaryAuditResult` with the game's observations.

    Raises:
        InvalidParameterError: on bad input (one sentence).
    """
    owner = "audit_one_run"
    confidence, delta, seed = _check_common(owner, mech, confidence, delta, seed)
    check_estimator(estimator, ONE_RUN_ESTIMATORS, delta)
    m = check_int(canaries, "canaries", owner, low=2)
    dim = None if dim is None else check_int(dim, "dim", owner)
    canary_rng, game_rng, estimator_rng = seed_streams(seed)
    start = time.perf_counter()
    design = _canary_design(mech, m, dim=dim, norm=norm, rng=canary_rng)
    chosen = scorer or InnerProduct()
    obs = one_run_game(mech, design, scorer=chosen, rng=game_rng)
    bound = one_run_bound(obs, estimator=estimator, delta=delta, confidence=confidence,
                          guess_counts=guess_counts_from(k_plus, k_minus), rng=estimator_rng)
    return audit_result(ONE_RUN, bound, chosen.name, start, seed, mech, delta, obs)


def audit_observations(
    obs: Observations,
    *,
    game: str,
    estimator: str,
    delta: float,
    confidence: float = 0.95,
    k_plus: int | None = None,
    k_minus: int | None = None,
    strategy: ThresholdStrategy = DominatingPair(),
    claim: Claim | None = None,
    seed: int = 0,
    label: str = "saved scores",
) -> CanaryAuditResult:
    """Return the audit of scores produced elsewhere (e.g. a user's pipeline), for the given `game`.

    "multi-run": independent runs, estimator "threshold" or "gdp".
    "one-run": one run whose canaries were each included independently with
    probability 1/2 (the user's responsibility), estimator "one-run" or
    "one-run-fdp". `claim`, if given, yields a verdict. The estimator's
    random stream is the one `audit_canaries`/`audit_one_run` use for the same
    seed, so re-auditing their saved observations gives the same bound.

    Args:
        obs: scores (higher = member) and truth produced elsewhere.
        game: "multi-run" or "one-run"; estimator: one of that game's.
        delta, confidence, k_plus, k_minus, strategy: of the bound.
        claim: the claim to give a verdict against (none: no verdict).
        seed: the estimator's stream; label: the scores' name in reports.

    Returns:
        A `CanaryAuditResult`.

    Raises:
        InvalidParameterError: on bad input (one sentence).
    """
    owner = "audit_observations"
    confidence = check_probability_open(confidence, "confidence", owner)
    delta = check_delta(delta, owner)
    seed = check_int(seed, "seed", owner, low=0)
    rng = seed_streams(seed)[2]
    start = time.perf_counter()
    if game == MULTI_RUN:
        bound = multi_run_bound(obs, estimator=estimator, delta=delta, confidence=confidence,
                                strategy=strategy, rng=rng)
    elif game == ONE_RUN:
        bound = one_run_bound(obs, estimator=estimator, delta=delta, confidence=confidence,
                              guess_counts=guess_counts_from(k_plus, k_minus), rng=rng)
    else:
        raise InvalidParameterError(f"The game must be '{MULTI_RUN}' or '{ONE_RUN}'; got {game!r} instead.")
    return CanaryAuditResult(game=game, lower_bound=bound, scorer=label, seconds=time.perf_counter() - start,
                             seed=seed, claim=claim, observations=obs)


def audit_result(game: str, bound: LowerBound, scorer: str, start: float, seed: int, mech: Mechanism,
                 delta: float, obs: Observations, attack: Mapping[str, Any] | None = None) -> CanaryAuditResult:
    """Return the result of a game played on `mech` since `start` (perf_counter), with its theory upper bound at δ."""
    return CanaryAuditResult(
        game=game, lower_bound=bound, scorer=scorer, seconds=time.perf_counter() - start, seed=seed,
        mechanism=mech.name, params=dict(mech.params), claim=mech.claim,
        upper_bound=theory_upper_bound(mech, delta), observations=obs, attack=dict(attack or {}),
    )
