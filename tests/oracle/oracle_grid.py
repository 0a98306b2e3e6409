"""The input-blind oracle: every public entry point, over its options as the code enumerates them, on releases that ignore their input.

Each entry point has axes: the values of each of its options, read from
the code wherever the code lists them (`INTERVALS`, `CANARY_MODES`, the
estimators of `certify.ESTIMATORS`, the threshold strategies of
`thresholds.ThresholdStrategy`, `THREATS`, `CANARY_CHOICES`, `DATASET_CHOICES`,
the relations, the choices and switches of every CLI subcommand's parser,
...), so that a new option value joins the grid by itself; `test_oracle`
checks that every parameter of every entry point (and every flag of every
subcommand) is an axis here or set aside with a reason, so that a new
option cannot be missed either. A cell is one value per axis; running it
audits a release that does not depend on its input (`oracle_blind`), or,
for DP-SGD, a correct loop at its own claim, and gives its outcome:
"consistent", "refused" (one sentence of bad input), "violation",
"violation-under-assumption", or "error: ..." (anything else). Only the
first two are acceptable.

Two designs of cells: `one_factor` (a base cell, then each axis value in
turn: every value played once; the default test run) and `all_pairs` (a
covering array in which every pair of values of two axes appears in some
cell, built greedily; the slow grid, over many seeds).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import io
import itertools
import os
import sys
import typing
from pathlib import Path
from typing import Any, Callable

import numpy as np
import oracle_blind as blind
import pandas as pd

HERE = Path(__file__).resolve().parent
REFUSED, CONSISTENT = "refused", "consistent"
ACCEPTABLE = (REFUSED, CONSISTENT)
RUNS, ONE_RUN_CANARIES, TRIALS, AUTO_BUDGET = 2000, 60, 20_000, 400_000
DPSGD_RUNS, DPSGD_CANARIES = 20, 20


@dataclasses.dataclass(frozen=True)
class Entry:
    """An entry point of the grid: its axes (name → values, the first value the base) and how a cell is run."""

    name: str
    axes: dict[str, tuple[Any, ...]]
    run: Callable[[dict[str, Any], int, float], str]
    fixed: dict[str, str] = dataclasses.field(default_factory=dict)
    """Parameters of the entry point that are not axes, each with the reason."""


# ---- designs


def one_factor(axes: dict[str, tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Return the base cell (each axis' first value), then one cell per other value of each axis."""
    base = {name: values[0] for name, values in axes.items()}
    cells = [base]
    for name, values in axes.items():
        cells += [{**base, name: value} for value in values[1:]]
    return cells


def all_pairs(axes: dict[str, tuple[Any, ...]], rng: np.random.Generator, candidates: int = 30) -> list[dict[str, Any]]:
    """Return cells in which every pair of values of two different axes appears at least once (greedy, AETG-like).

    Each new cell starts from an uncovered pair and fills the other axes,
    in random order, with the value covering the most uncovered pairs; the
    best of `candidates` tries is kept.
    """
    names = list(axes)
    uncovered = {(a, i, b, j) for a, b in itertools.combinations(range(len(names)), 2)
                 for i in range(len(axes[names[a]])) for j in range(len(axes[names[b]]))}
    cells: list[list[int]] = []
    while uncovered:
        a, i, b, j = min(uncovered)
        best, gain = None, -1
        for _ in range(candidates):
            cell = _fill(names, axes, {a: i, b: j}, uncovered, rng)
            covered = _pairs(cell) & uncovered
            if len(covered) > gain:
                best, gain = cell, len(covered)
        cells.append(best)
        uncovered -= _pairs(best)
    return [{names[k]: axes[names[k]][v] for k, v in enumerate(cell)} for cell in cells]


def _pairs(cell: list[int]) -> set[tuple[int, int, int, int]]:
    return {(a, cell[a], b, cell[b]) for a, b in itertools.combinations(range(len(cell)), 2)}


def _fill(names, axes, fixed: dict[int, int], uncovered, rng) -> list[int]:
    cell = [fixed.get(k, -1) for k in range(len(names))]
    for k in rng.permutation(len(names)):
        if cell[k] >= 0:
            continue
        def gain(v: int) -> int:
            return sum((min(k, m), v if k < m else cell[m], max(k, m), cell[m] if k < m else v) in uncovered
                       for m in range(len(names)) if cell[m] >= 0)
        scores = [gain(v) for v in range(len(axes[names[k]]))]
        top = [v for v, s in enumerate(scores) if s == max(scores)]
        cell[k] = int(rng.choice(top))
    return cell


# ---- outcomes


def outcome_of(call: Callable[[], Any], epsilon: float | None = None) -> str:
    """Return the outcome of an audit call: its verdict, "refused" on bad input, else "error: ...".

    An audit without a claim has no verdict: its bound is compared with
    `epsilon`. What the audited code prints is kept off the test's output.
    """
    from dpaudit.errors import InvalidParameterError

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            result = call()
    except InvalidParameterError as exc:
        return REFUSED if "\n" not in str(exc) else f"error: a refusal of several lines: {exc}"
    except Exception as exc:  # anything else is a defect the oracle reports
        return f"error: {type(exc).__name__}: {exc}"
    if result.verdict is None:
        return "violation" if result.lower_bound.epsilon > epsilon else CONSISTENT
    return result.verdict


# ---- audit_mechanism


DATA_KINDS = ("numbers", "vectors", "frame", "dict", "structured", "strings", "empty")
OUTPUT_KINDS = ("number", "float32", "integer", "vector", "string", "complex_number", "big_integer", "table")


def two_dataset_pair(kind: str, relation: str) -> tuple[Any, Any]:
    """Return a neighbouring pair of datasets of `kind` under `relation` (one record added, or replaced)."""
    add = relation == "add-remove"
    if kind == "numbers":
        return [0.0, 1.0], ([0.0, 1.0, 1.0] if add else [0.0, 0.5])
    if kind == "vectors":
        d0 = np.zeros((2, blind.WIDTH))
        return d0, (np.vstack([d0, np.ones(blind.WIDTH)]) if add else np.vstack([d0[:1], np.ones(blind.WIDTH)]))
    if kind in ("frame", "dict"):
        a, b = {"spend": [1.0, 2.0], "age": [30.0, 40.0]}, {"age": [30.0, 40.0, 50.0], "spend": [1.0, 2.0, 3.0]}
        if not add:
            b = {"age": [30.0, 41.0], "spend": [1.0, 2.0]}
        return (pd.DataFrame(a), pd.DataFrame(b)) if kind == "frame" else (a, b)
    if kind == "structured":
        fields = [("spend", float), ("age", float)]
        d0 = np.array([(1.0, 30.0), (2.0, 40.0)], dtype=fields)
        return d0, np.array([(1.0, 30.0), (2.0, 40.0), (3.0, 50.0)] if add else [(1.0, 30.0), (2.0, 41.0)], dtype=fields)
    if kind == "strings":
        return ["a", "b"], (["a", "b", "c"] if add else ["a", "c"])
    return ([], [1.0]) if add else ([1.0], [2.0])


def _per_output(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Return `fn` as a function of (data, rng) giving one output a call, whether or not `fn` takes `size`."""
    takes_size = "size" in inspect.signature(fn).parameters

    def one(data, rng):
        return fn(data, rng, 1)[0] if takes_size else fn(data, rng)
    return one


def _two_dataset_mechanism(cell: dict[str, Any], epsilon: float, pair: tuple[Any, Any]) -> Any:
    """Return the blind mechanism of the cell; a table release made into the features of `blind.TABLE_TARGET`."""
    from dpaudit.mechanisms.table_features import tabulate

    mech = _blind_target(cell, epsilon, pair)
    return tabulate(mech, blind.TABLE_TARGET) if cell["output"] == "table" else mech


def _blind_target(cell: dict[str, Any], epsilon: float, pair: tuple[Any, Any]) -> Any:
    from dpaudit.mechanisms import blackbox
    from dpaudit.mechanisms.external.processes import external_python

    fn = getattr(blind, cell["output"])
    claim = dict(epsilon=epsilon, delta=cell["claim_delta"], relation=cell["relation"], default_pair=pair)
    if cell["target"] == "external":  # the protocol calls fn(data, rng, size=N)
        name = cell["output"] if "size" in inspect.signature(fn).parameters else f"{cell['output']}_many"
        return external_python(sys.executable, f"oracle_blind:{name}", path=[HERE], **claim)
    if cell["target"] == "per-output":
        return blackbox(_per_output(fn), **claim)
    if cell["target"] == "own-check":
        return blackbox(fn, neighbours=lambda a, b: len(a) - len(b) in (-1, 0, 1), null_record=0.0, **claim)
    return blackbox(fn, **claim)


def run_two_dataset(cell: dict[str, Any], seed: int, epsilon: float) -> str:
    from dpaudit.audit import Bound, Execution, audit_mechanism
    from dpaudit.audit.audits.auto_trials import AutoBudget
    from dpaudit.audit.estimators.intervals import interval_named

    pair = two_dataset_pair(cell["data"], cell["relation"])

    def call():
        mech = _two_dataset_mechanism(cell, epsilon, pair)
        given = () if cell["search"] else pair
        auto = cell["trials"] in ("auto", "sequential", "default")
        trials = {"fixed": TRIALS, "default": None}.get(cell["trials"], cell["trials"])
        execution = Execution(workers=cell["workers"], progress=(lambda n: None) if cell["progress"] else False)
        return audit_mechanism(
            mech, *given, trials=trials, seed=seed, search=cell["search"],
            bound=Bound(delta=cell["delta"], strategy=interval_named(cell["interval"])),
            budget=AutoBudget(max_trials=AUTO_BUDGET) if auto else None, execution=execution,
        )
    return outcome_of(call)


def two_dataset_entry() -> Entry:
    from dpaudit.audit.audits.two_dataset import INTERVALS
    from dpaudit.mechanisms.base import Relation

    return Entry("audit_mechanism", {
        "target": ("blackbox", "per-output", "own-check", "external"),
        "relation": tuple(r.value for r in Relation),
        "data": DATA_KINDS,
        "output": OUTPUT_KINDS,
        "interval": tuple(INTERVALS),
        "trials": ("fixed", "auto", "sequential", "default"),
        "search": (False, True, "hunt"),
        "claim_delta": (0.0, 1e-5),
        "delta": (None, 1e-3),
        "workers": (None, 2),
        "progress": (False, True),
    }, run_two_dataset, fixed={
        "mechanism": "the blind mechanism of the cell", "d0": "the cell's data", "d1": "the cell's data",
        "seed": "the grid's seeds", "confidence": "0.95 throughout; its effect is the level the slow grid tests",
        "scheduler": "needs a running Dask cluster; `workers` plays the same backend",
        "budget": "the trials axis ('default': left out, budgeting the sequential default of an external target)",
        "bound": "the interval and delta axes", "execution": "the workers and progress axes",
        "interval": "an axis, through bound=", "progress": "an axis, through execution=", "workers": "an axis, through execution=",
    })


# ---- audit_canaries


def _canary_records(kind: str):
    from dpaudit.mechanisms.records import BoxRecords, CategoryRecords, VectorRecords

    return {"vector": (VectorRecords(width=blind.WIDTH), blind.vector),
            "category": (CategoryRecords(blind.CATEGORIES), blind.histogram),
            "box": (BoxRecords(0.0, 1.0, blind.WIDTH), blind.vector),
            "none": (None, blind.number)}[kind]


def _canary_pair(kind: str, relation: str) -> tuple[Any, Any]:
    if kind == "category":
        return [0, 1], ([0, 1, 2] if relation == "add-remove" else [0, 2])
    return two_dataset_pair("vectors" if kind in ("vector", "box") else "numbers", relation)


def _strategies() -> tuple[Any, ...]:
    from dpaudit.audit.estimators import thresholds

    kinds = (thresholds.BestOf,) + typing.get_args(thresholds.Strategy)
    return tuple(kind() for kind in kinds)


def _bound(cell: dict[str, Any]):
    """Return the cell's Bound; a sequential game with the default estimator takes no strategy (it has its own test, and
    refuses one given: tests/audit/audits/test_sequential_runs.py), so the strategy axis is left out there."""
    from dpaudit.audit.estimators.certify import Bound

    if cell.get("sequential") and cell["game"] == "multi-run" and cell["estimator"] is None:
        return Bound()
    return Bound(estimator=cell["estimator"], strategy=cell["strategy"])


def _game(cell: dict[str, Any], runs: int, canaries: int):
    from dpaudit.attacks.games import MultiRun, OneRun

    return MultiRun(runs, sequential=cell.get("sequential", False)) if cell["game"] == MultiRun.name else OneRun(canaries)


def declared_builtins() -> tuple[str, ...]:
    """Return the correct built-ins that declare their records: canary targets of their own claim."""
    from dpaudit.mechanisms.registry import get_mechanism, list_mechanisms, registration

    return tuple(name for name in list_mechanisms() if registration(name).expected == "consistent"
                 and registration(name).ready() and get_mechanism(name).records is not None)


def _canary_mechanism(cell: dict[str, Any], epsilon: float):
    """Return the blind mechanism of the cell, or a correct built-in claiming its own ε plus `epsilon` (slow grid: 0)."""
    from dpaudit.mechanisms import blackbox, get_mechanism

    if cell["target"] != "blind":
        mech = get_mechanism(cell["target"])
        return mech.with_claim(epsilon=mech.claim.epsilon + epsilon)
    spec, fn = _canary_records(cell["records"])
    pair = _canary_pair(cell["records"], cell["relation"])
    return blackbox(fn, epsilon=epsilon, delta=cell["claim_delta"], relation=cell["relation"], records=spec,
                    default_pair=pair, null_record=0.0 if cell["records"] != "category" else None)


def run_canaries(cell: dict[str, Any], seed: int, epsilon: float) -> str:
    from dpaudit.attacks.canary_scores import scorer_by_name
    from dpaudit.audit import Execution, audit_canaries

    def call():
        mech = _canary_mechanism(cell, epsilon)
        scorer = None if cell["scorer"] is None else scorer_by_name(cell["scorer"])
        return audit_canaries(mech, game=_game(cell, RUNS, ONE_RUN_CANARIES), bound=_bound(cell), canary=cell["canary"],
                              scorer=scorer, seed=seed, execution=Execution(workers=cell["workers"]))
    return outcome_of(call)


def _membership_axes() -> dict[str, tuple[Any, ...]]:
    from dpaudit.attacks.games import MultiRun, OneRun
    from dpaudit.audit.estimators.certify import ESTIMATORS

    return {"game": (MultiRun.name, OneRun.name), "estimator": (None, *ESTIMATORS), "strategy": _strategies(),
            "claim_delta": (0.0, 1e-5)}


def canaries_entry() -> Entry:
    from dpaudit.attacks.canary_design import CANARY_MODES
    from dpaudit.attacks.canary_scores import STATISTICS
    from dpaudit.mechanisms.base import Relation

    return Entry("audit_canaries", {
        "target": ("blind", *declared_builtins()),
        "records": ("vector", "category", "box", "none"),
        "relation": tuple(r.value for r in Relation),
        "canary": tuple(CANARY_MODES),
        "scorer": (None, "inner-product", *(f"black-box-{s}" for s in STATISTICS)),
        "workers": (None, 2),
        "sequential": (False, True),
        **_membership_axes(),
    }, run_canaries, fixed={"mech": "the blind mechanism of the cell", "game": "the game axis", "bound": "estimator and strategy",
                            "dim": "the declared width", "norm": "the declared norm", "seed": "the grid's seeds",
                            "execution": "the workers axis (a scheduler: the same backend; a store is refused)"})


# ---- audit_scores


def run_scores(cell: dict[str, Any], seed: int, epsilon: float) -> str:
    from dpaudit.attacks.observations import Observations
    from dpaudit.audit import audit_scores
    from dpaudit.mechanisms import Claim

    rng = np.random.default_rng([seed, 17])
    n = RUNS if cell["game"] == "multi-run" else ONE_RUN_CANARIES * 10
    obs = Observations(scores=rng.normal(size=n), truth=rng.random(n) < 0.5)
    claim = Claim(epsilon, cell["claim_delta"]) if cell["claim"] else None
    return outcome_of(lambda: audit_scores(obs, game=_game(cell, n, n), bound=_bound(cell), claim=claim, seed=seed), epsilon)


def scores_entry() -> Entry:
    return Entry("audit_scores", {**_membership_axes(), "claim": (True, False)}, run_scores,
                 fixed={"obs": "scores drawn apart from the truth", "game": "the game axis", "bound": "estimator and strategy",
                        "seed": "the grid's seeds", "label": "a name in reports", "execution": "in process only"})


# ---- audit_tracing


def run_tracing(cell: dict[str, Any], seed: int, epsilon: float) -> str:
    from dpaudit.audit import Execution, audit_tracing
    from dpaudit.mechanisms import blackbox

    def call():
        mech = blackbox(blind.marginals, epsilon=epsilon, delta=cell["claim_delta"], relation=cell["relation"])
        game = _game(cell, RUNS // 4, None) if cell["game"] == "multi-run" else _game(cell, 0, 0).__class__(None)
        return audit_tracing(mech, game=game, bound=_bound(cell), rows=20, dim=40, scorer=cell["scorer"],
                             reference_rows=cell["reference_rows"], biases=cell["biases"], fresh_data=cell["fresh_data"],
                             group_size=cell["group_size"], seed=seed, execution=Execution(workers=cell["workers"]))
    return outcome_of(call)


def tracing_entry() -> Entry:
    from dpaudit.attacks.tracing.data import BIAS_KINDS
    from dpaudit.attacks.tracing.scores import SCORE_KINDS
    from dpaudit.mechanisms.base import Relation

    return Entry("audit_tracing", {
        "relation": tuple(r.value for r in Relation), "scorer": tuple(SCORE_KINDS), "biases": tuple(BIAS_KINDS),
        "fresh_data": (False, True), "group_size": (1, 2), "reference_rows": (None, 30), "workers": (None, 2),
        **_membership_axes(),
    }, run_tracing, fixed={"mech": "the blind release of d statistics", "game": "the game axis", "bound": "estimator and strategy",
                           "rows": "n = 20", "dim": "d = 40", "seed": "the grid's seeds",
                           "execution": "the workers axis (a scheduler: the same backend; a store is refused)"})


# ---- audit_dpsgd


def _user_target(cell: dict[str, Any], epsilon: float):
    from dpaudit.mechanisms import Claim
    from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
    from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

    x, y = blind.data()
    settings = dict(clip_norm=blind.CLIP, noise_multiplier=blind.SIGMA, sample_rate=blind.RATE, learning_rate=blind.LR)
    stated = settings if cell["settings"] == "stated" else {}
    if cell["target"] == "user-correct":
        event = poisson_event(blind.SIGMA, blind.RATE, blind.STEPS)
        return UserTrainer(train=blind.correct_train, losses=blind.losses, x=x, y=y, event=event,
                           claim=Claim(pld_epsilon(event, 1e-5), 1e-5), name="correct_loop", **stated)
    return UserTrainer(train=blind.blind_train, losses=blind.losses, x=x, y=y, claim=Claim(epsilon, 1e-5), name="blind_loop",
                       **stated)


def _hook_target(epsilon: float):
    from dpaudit.mechanisms import Claim
    from dpaudit.mechanisms.dpsgd.data import load_data
    from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

    sys.path.insert(0, str(HERE.parent / "mechanisms" / "dpsgd"))
    loops = importlib.import_module("opacus_loops")
    digits = load_data("digits")
    train = loops.make_train("logreg", noise_multiplier=1.0, steps=3, learning_rate=0.0)
    return UserTrainer(train=train, losses=lambda w, x, y: np.zeros(len(y)), x=digits.x[:60], y=digits.y[:60],
                       claim=Claim(epsilon, 1e-5), name="opacus_hook_lr0")


def run_dpsgd(cell: dict[str, Any], seed: int, epsilon: float) -> str:
    from dpaudit.audit import audit_dpsgd
    from dpaudit.mechanisms.dpsgd.config import DPSGDConfig

    def call():
        user = cell["target"].startswith("user") or cell["target"] == "opacus-hook"
        if cell["target"] == "opacus-hook":
            target = _hook_target(epsilon)
        elif user:
            target = _user_target(cell, epsilon)
        else:
            target = cell["target"]
        config = DPSGDConfig(steps=3, sample_rate=1.0, noise_multiplier=2.0)
        options = {"dataset": cell["dataset"]} if user else {}
        default = cell["sequential"] == "default" and cell["game"] == "multi-run"  # the game left out: audit_dpsgd's
        game = None if default else _game(cell, DPSGD_RUNS, DPSGD_CANARIES)
        return audit_dpsgd(config, target=target, game=game, bound=_bound(cell),
                           canary=cell["canary"], dirac_target=cell["dirac_target"], threat=cell["threat"],
                           scorer=cell["scorer"], seed=seed, **options)
    return outcome_of(call)


def dpsgd_entry() -> Entry:
    from dpaudit.attacks.dpsgd.canaries import CANARY_CHOICES, DIRAC_TARGETS
    from dpaudit.attacks.dpsgd.game import TARGETS
    from dpaudit.attacks.dpsgd.scores import BLACK_BOX_SCORES, THREATS
    from dpaudit.audit.audits.dpsgd import DATASET_CHOICES

    return Entry("audit_dpsgd", {
        "target": ("user-blind", "user-correct", "opacus-hook", *TARGETS),
        "threat": tuple(THREATS), "canary": tuple(CANARY_CHOICES), "dataset": (*DATASET_CHOICES, 3),
        "settings": ("stated", "not stated"), "dirac_target": tuple(DIRAC_TARGETS), "scorer": tuple(BLACK_BOX_SCORES),
        "sequential": (False, True, "default"),
        **{k: v for k, v in _membership_axes().items() if k != "claim_delta"},
    }, run_dpsgd, fixed={"config": "a 3-step full-batch configuration for dpaudit's trainer and Opacus",
                         "game": "the game axis", "bound": "estimator and strategy", "runs": "the game axis",
                         "execution": "in process; the run store's fingerprint has tests of its own", "seed": "the grid's seeds"})


# ---- audit_replay


def run_replay(cell: dict[str, Any], seed: int, epsilon: float) -> str:
    from dpaudit.audit import Bound, audit_replay
    from dpaudit.mechanisms import blackbox
    from dpaudit.mechanisms.table_features import tabulate

    pair = two_dataset_pair(cell["data"], cell["relation"])
    fn = getattr(blind, cell["output"])
    fn = _per_output(fn) if cell["target"] == "per-output" else fn

    def call():
        mech = blackbox(fn, epsilon=epsilon, delta=cell["claim_delta"], relation=cell["relation"], default_pair=pair)
        mech = tabulate(mech, blind.TABLE_TARGET) if cell["output"] == "table" else mech
        given = () if cell["search"] else pair
        return audit_replay(mech, *given, trials=TRIALS, seed=seed, search=cell["search"], certify=cell["certify"],
                            bound=Bound(delta=cell["delta"]))
    return outcome_of(call)


def replay_entry() -> Entry:
    from dpaudit.mechanisms.base import Relation

    return Entry("audit_replay", {
        "target": ("blackbox", "per-output"),
        "relation": tuple(r.value for r in Relation),
        "data": DATA_KINDS,
        "output": OUTPUT_KINDS,
        "search": (False, True),
        "certify": (3, 1),
        "claim_delta": (0.0, 1e-5),
        "delta": (None, 1e-3),
    }, run_replay, fixed={
        "mechanism": "the blind mechanism of the cell", "d0": "the cell's data", "d1": "the cell's data",
        "seed": "the grid's seeds", "trials": "20,000 per certificate, as audit_mechanism's cells",
        "confidence": "0.95 throughout; its effect is the level the slow grid tests", "bound": "the delta axis",
        "kinds": "the search axis plays every kind", "execution": "audit_mechanism's cells play every backend",
    })


# ---- assert_private


def run_testing(cell: dict[str, Any], seed: int, epsilon: float) -> str:
    from dpaudit.mechanisms import blackbox
    from dpaudit.testing import PrivacyViolation, assert_private

    pair = two_dataset_pair("numbers", "add-remove")
    mech = blackbox(blind.number, epsilon=epsilon, default_pair=pair)
    try:
        return outcome_of(lambda: assert_private(mech, confidence=cell["confidence"], max_seconds=cell["max_seconds"],
                                                 max_trials=cell["max_trials"], seed=seed, replay=cell["replay"]))
    except PrivacyViolation:
        return "violation"


def testing_entry() -> Entry:
    return Entry("assert_private", {"confidence": (0.95, 0.99), "max_seconds": (60.0, 2.0), "max_trials": (AUTO_BUDGET, 100_000),
                                    "replay": (False, True)},
                 run_testing, fixed={"mechanism": "the blind mechanism", "d0": "its default pair", "d1": "its default pair",
                                     "seed": "the grid's seeds"})


# ---- the CLI


CLI_TARGETS = {
    "audit": ["oracle_targets:NUMBER"],
    "canary": ["oracle_targets:VECTORS"],
    "one-run": ["oracle_targets:VECTORS"],
    "trace": ["oracle_targets:MARGINALS", "--rows", "20", "--dim", "40"],
    "dpsgd": ["--target", "oracle_targets:BLIND_TRAINER"],
    "replay": ["oracle_targets:NUMBER"],
}
"""The blind target and required flags of each audit subcommand the grid plays."""

CLI_VALUES: dict[str, dict[str, tuple[Any, ...]]] = {
    "audit": {"--trials": ("20000", "auto", "sequential", None), "--max-trials": (None, "400000"), "--confidence": (None, "0.99"),
              "--python": (None, "PYTHON")},
    "canary": {"--runs": (None, "3000", "sequential"), "--max-runs": (None, "3000"), "--one-run": (False, True),
               "--canaries": (None, "60"), "--confidence": (None, "0.99"),
               "--scorer": (None, "inner-product", "black-box-sum")},
    "one-run": {"--canaries": (None, "60"), "--runs": (None, "3000", "sequential"), "--confidence": (None, "0.99"),
                "--scorer": (None, "inner-product", "black-box-max")},
    "trace": {"--runs": ("500",), "--reference-rows": (None, "30"), "--group": (None, "2"), "--confidence": (None, "0.99"),
              "--canaries": (None, "20")},
    "replay": {"--trials": ("20000",), "--certify": (None, "1"), "--confidence": (None, "0.99")},
    "dpsgd": {"--data": (None, "canaries", "3"), "--runs": (None, "20", "sequential"), "--max-runs": (None, "40"),
              "--confidence": (None, "0.99"), "--canaries": (None, "20")},
}
"""Flags whose values the grid chooses (the rest of the choices and switches come from each parser)."""

CLI_SHARED_VALUES: dict[str, tuple[Any, ...]] = {"--null-record": (None, "0")}
"""Flags whose values the grid chooses on every subcommand that has them."""


def cli_axes(command: str) -> tuple[dict[str, tuple[Any, ...]], dict[str, str]]:
    """Return the axes of a subcommand (choices and switches from its parser, plus `CLI_VALUES`) and the flags set aside."""
    from dpaudit.audit.cli import build_parser

    parser = build_parser([command])
    sub = next(a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict)).choices[command]
    axes, fixed = {}, {}
    given = {**CLI_SHARED_VALUES, **CLI_VALUES.get(command, {})}
    for action in sub._actions:
        flag = max(action.option_strings, key=len) if action.option_strings else action.dest
        if flag in given:
            axes[flag] = given[flag]
        elif action.option_strings and action.nargs == 0 and flag not in ("--help", "--quiet", "--json"):
            axes[flag] = (False, True)
        elif action.choices is not None and action.option_strings:
            axes[flag] = (None, *list(action.choices))
        else:
            fixed[flag] = CLI_FIXED.get(flag, "")
    return axes, fixed


CLI_FIXED = {
    "-h": "help", "--help": "help", "--json": "always on: the grid reads the verdict from the JSON",
    "--quiet": "always on", "name": "the blind target", "--param": "blind targets take no parameters",
    "--epsilon": "the claim, set by the grid", "--delta": "the claim's δ, 0 or the target's",
    "--seed": "the grid's seeds", "--save": "the path checks have tests of their own", "--report": "as --save",
    "--out": "as --save", "--store": "the run store's fingerprint has tests of its own", "--workers": "the Python grid plays Dask",
    "--scheduler": "needs a running Dask cluster", "--timeout": "time limits have tests of their own",
    "--max-seconds": "as --timeout", "--tight": "a fraction of the claim, which the grid sets", "--d0": "the target's pair",
    "--d1": "the target's pair", "--command": "external processes: --python", "--scores": "audit_scores plays saved scores",
    "--at-delta": "δ of the bound: the estimator axis covers δ > 0", "--k-plus": "the one-run default rules",
    "--k-minus": "the one-run default rules", "--dim": "the declared width", "--norm": "the declared norm",
    "--noise-multiplier": "the grid's training settings", "--clip-norm": "the grid's training settings",
    "--sample-rate": "the grid's training settings", "--steps": "the grid's training settings",
    "--learning-rate": "the grid's training settings",
    "--target": "the blind loop (the Python grid plays every target)", "--rows": "n = 20",
    "--max-runs": "budgets --runs sequential: an axis where a subcommand plays it (canary, dpsgd); trace and one-run "
                  "--runs sequential cover its refusals",
}
"""Flags of the audit subcommands that are not axes, each with the reason."""


def run_cli(command: str) -> Callable[[dict[str, Any], int, float], str]:
    def run(cell: dict[str, Any], seed: int, epsilon: float) -> str:
        from dpaudit.audit.cli import main

        target = ["oracle_blind:number"] if cell.get("--python") else CLI_TARGETS[command]
        argv = [command, *target, "--seed", str(seed), "--json", "--quiet"]
        if command != "dpsgd":
            argv += ["--epsilon", str(epsilon)]
        for flag, value in cell.items():
            if value is True:
                argv.append(flag)
            elif value not in (None, False):
                argv += [flag, sys.executable if value == "PYTHON" else str(value)]
        cwd = os.getcwd()
        os.chdir(HERE)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
                status = main(argv)
        finally:
            os.chdir(cwd)
        return {0: CONSISTENT, 1: "violation", 2: REFUSED}.get(status, f"error: exit {status}: {err.getvalue().strip()}")
    return run


def cli_entries() -> list[Entry]:
    entries = []
    for command in CLI_TARGETS:
        axes, fixed = cli_axes(command)
        entries.append(Entry(f"dpaudit {command}", axes, run_cli(command), fixed))
    return entries


def entries() -> list[Entry]:
    """Return every entry point of the grid."""
    return [two_dataset_entry(), canaries_entry(), scores_entry(), tracing_entry(), dpsgd_entry(), testing_entry(),
            replay_entry(), *cli_entries()]
