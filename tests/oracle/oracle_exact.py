"""The exact-ε oracle: releases of known law, through every public constructor and transform, on pairs of each relation.

A target is a mechanism whose output law on any dataset is known in
closed form (`Law`): a Laplace, Gaussian or discrete Laplace noise around a
sum or a count, an exponential mechanism, randomized response. A cell puts
one target through one way of building a mechanism (`blackbox` under a
relation and null record, a built-in by name, each transform of
`dpaudit.mechanisms.transforms`), draws neighbouring pairs from the
relation's definition (`draw_pair`: records inserted, removed, replaced by
or with the null record, replaced in place; k steps for a group), and pairs
one step too far, and audits them. Its law on each dataset (`Cell.law`)
gives the pair's exact ε (`exact_epsilon`: the hockey-stick divergence on a
grid fine enough that its error is far below the tolerance), so:

- a valid pair refused, or an invalid pair accepted, is a defect;
- an accepted pair whose exact ε exceeds the claim is a defect (dpaudit
  accepted a pair its claim does not cover: a false violation waits there);
- a certified lower bound above the pair's exact ε is allowed at the rate
  1 − confidence, no more.

`play_replay` plays the same valid pairs through `audit_replay` (the
replay, then its certificate on fresh draws): a correct mechanism of exact
ε at that pair gives a certificate above it at the same rate, no more.
`play_sequential_runs` plays them as the pair of a sequential multi-run
game (`audit_canaries(..., game=MultiRun(runs, sequential=True),
canary="pair")`, watched to its budget): the same rule holds for its bound.
`play_default` plays them through `audit_mechanism` given no trials, the
mechanism typed as one in another process: the sequential default of an
expensive mechanism, watched to its budget; the same rule holds.

`TRANSFORMS` and `CONSTRUCTORS` are read from the code: a public name of
`dpaudit.mechanisms` or of its transforms that is neither a cell here nor
set aside with a reason fails `test_exact_oracle`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import zlib
from typing import Any, Callable

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import Mechanism, blackbox, get_mechanism
from dpaudit.mechanisms import transforms as tf
from scipy.special import logsumexp

EPSILON, DELTA, GROUP, COMPOSED, RATE, USERS = 1.0, 1e-5, 2, 3, 0.5, 5


@dataclasses.dataclass(frozen=True)
class Law:
    """An output law: `kind` noise of `scale` around centres (a mixture: (weight, centre) parts), a categorical
    distribution (one part: its probabilities), or a product of categoricals (one part per coordinate)."""

    kind: str
    scale: float
    parts: tuple


def _log_masses(law0: Law, law1: Law) -> tuple[np.ndarray, np.ndarray]:
    """Return the log-probabilities of the two laws on one support (a fine grid for densities)."""
    if law0.kind == "categorical":
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(law0.parts[0])), np.log(np.asarray(law1.parts[0]))
    centres = [c for _, c in law0.parts + law1.parts]
    width = 40 * law0.scale if law0.kind != "gaussian" else 14 * law0.scale
    if law0.kind == "discrete-laplace":
        points = np.arange(math.floor(min(centres) - width), math.ceil(max(centres) + width) + 1, dtype=float)
        a = law0.scale
        log_norm, log_mass = math.log(-math.expm1(-a)) - math.log1p(math.exp(-a)), lambda x: -a * np.abs(x)
        width = 1.0
    else:
        points = np.linspace(min(centres) - width, max(centres) + width, 400_001)
        step = points[1] - points[0]
        if law0.kind == "laplace":
            b = law0.scale
            log_norm, log_mass = math.log(step / (2 * b)), lambda x: -np.abs(x) / b
        else:
            s = law0.scale
            log_norm, log_mass = math.log(step / (s * math.sqrt(2 * math.pi))), lambda x: -0.5 * (x / s) ** 2

    def masses(law: Law) -> np.ndarray:
        weights = np.log([w for w, _ in law.parts])
        return logsumexp([lw + log_mass(points - c) for lw, (_, c) in zip(weights, law.parts)], axis=0) + log_norm

    return masses(law0), masses(law1)


def exact_epsilon(law0: Law, law1: Law, delta: float, compositions: int = 1) -> float:
    """Return the smallest ε for which the two laws (each composed `compositions` times) are (ε, δ)-indistinguishable.

    δ = 0: the largest absolute log-ratio, times the compositions (pure ε adds
    up exactly). δ > 0: the hockey-stick divergence, bisected to 1e-9; the
    only composed law with δ > 0 here is a Gaussian's, which composes into
    the Gaussian of the shift times √k.
    """
    if law0.kind == "product":
        return compositions * sum(_largest_log_ratio(np.log(p), np.log(q)) for p, q in zip(law0.parts, law1.parts))
    if compositions > 1 and delta > 0:
        grow = math.sqrt(compositions)
        law0, law1 = (dataclasses.replace(law, parts=tuple((w, c * grow) for w, c in law.parts)) for law in (law0, law1))
        compositions = 1
    lm0, lm1 = _log_masses(law0, law1)
    if delta == 0:
        return compositions * _largest_log_ratio(lm0, lm1)
    m0, m1 = np.exp(lm0), np.exp(lm1)

    def excess(eps: float) -> float:
        return max(np.maximum(m0 - math.exp(eps) * m1, 0).sum(), np.maximum(m1 - math.exp(eps) * m0, 0).sum()) - delta

    low, high = 0.0, 60.0
    if excess(low) <= 0:
        return 0.0
    while high - low > 1e-9:
        middle = (low + high) / 2
        low, high = (low, middle) if excess(middle) <= 0 else (middle, high)
    return high


def _largest_log_ratio(lm0: np.ndarray, lm1: np.ndarray) -> float:
    both = np.isfinite(lm0) & np.isfinite(lm1)
    if np.any(np.isfinite(lm0) != np.isfinite(lm1)):
        return math.inf
    return float(np.max(np.abs(lm0[both] - lm1[both]))) if both.any() else 0.0


# ---- targets: a release of known law, the records it takes


@dataclasses.dataclass(frozen=True)
class Target:
    """A release of known law: how it is built (a blackbox function or a built-in), its law, its records."""

    name: str
    law: Callable[[np.ndarray], Law]
    record: Callable[[np.random.Generator], Any]
    fn: Callable[..., Any] | None = None
    builtin: dict[str, Any] | None = None
    delta: float = 0.0
    zero: Any = 0.0
    """The record that adds nothing to the release, declared as the null record by the blackbox variants that declare one."""
    local: bool = False
    """True for a local randomizer (one report per record), the only kind `shuffle` takes."""


def _laplace_sum(data, rng, size):
    return np.sum(data) + rng.laplace(0.0, 1.0 / EPSILON, size)


def _count(data, rng, size):
    return len(data) + rng.laplace(0.0, 1.0 / EPSILON, size)


def _sigma() -> float:
    return get_mechanism("gaussian", epsilon=EPSILON, delta=DELTA).params["sigma"]


def _gaussian_sum(data, rng, size):
    return np.sum(data) + rng.normal(0.0, _sigma(), size)


def _discrete_laplace_sum(data, rng, size):
    p = -math.expm1(-EPSILON / 2)  # records in {0, 1, 2}: sensitivity 2
    return int(np.sum(data)) + rng.geometric(p, size) - rng.geometric(p, size)


CHOICES = 3


def _exponential_probabilities(data) -> np.ndarray:
    counts = np.bincount(np.asarray(data, dtype=int), minlength=CHOICES)[:CHOICES]
    weights = np.exp(EPSILON * (counts - counts.max()) / 2)
    return weights / weights.sum()


def _exponential(data, rng, size):
    return rng.choice(CHOICES, size=size, p=_exponential_probabilities(data))


def _centred(kind: str, scale: float, statistic: Callable[[np.ndarray], float]) -> Callable[[np.ndarray], Law]:
    return lambda d: Law(kind, scale, ((1.0, float(statistic(d))),))


def _rr_law(d: np.ndarray) -> Law:
    keep = 1 / (1 + math.exp(-EPSILON))
    return Law("product", 0.0, tuple(np.array([keep, 1 - keep])[::1 if v == 0 else -1] for v in np.asarray(d, int)))


def targets() -> list[Target]:
    """Return the releases of known law: user functions (blackbox) and built-ins (get_mechanism)."""
    unit, bit = (lambda rng: round(float(rng.uniform(0.05, 1.0)), 3)), (lambda rng: int(rng.integers(0, 2)))
    laplace_law = _centred("laplace", 1 / EPSILON, np.sum)
    return [
        Target("laplace_sum", laplace_law, unit, fn=_laplace_sum),
        Target("count", _centred("laplace", 1 / EPSILON, len), unit, fn=_count),
        Target("gaussian_sum", lambda d: Law("gaussian", _sigma(), ((1.0, float(np.sum(d))),)), unit,
               fn=_gaussian_sum, delta=DELTA),
        Target("discrete_laplace_sum", _centred("discrete-laplace", EPSILON / 2, np.sum), lambda rng: int(rng.integers(0, 3)),
               fn=_discrete_laplace_sum, zero=0),
        Target("exponential", lambda d: Law("categorical", 0.0, (_exponential_probabilities(d),)),
               lambda rng: int(rng.integers(0, CHOICES)), fn=_exponential, zero=0),
        Target("laplace", laplace_law, unit, builtin={"epsilon": EPSILON}),
        Target("geometric", _centred("discrete-laplace", EPSILON, np.sum), bit, builtin={"epsilon": EPSILON}),
        Target("gaussian", lambda d: Law("gaussian", _sigma(), ((1.0, float(np.sum(d))),)), unit,
               builtin={"epsilon": EPSILON, "delta": DELTA}, delta=DELTA),
        Target("randomized_response", _rr_law, bit, builtin={"epsilon": EPSILON, "k": 2}, local=True),
    ]


# ---- ways of building a mechanism, and transforms


VARIANTS = (("add-remove", None), ("add-remove", "null"), ("replace-one", None))
"""The relations and null records a user function is wrapped with (`blackbox`); "null" is the target's zero record."""

TRANSFORMS: dict[str, tuple[Callable[[Mechanism], Mechanism], int]] = {
    "compose": (lambda m: tf.compose(m, COMPOSED), 1),
    "subsample": (lambda m: tf.subsample(m, RATE), 1),
    "group": (lambda m: tf.group(m, GROUP), GROUP),
    "copies": (lambda m: tf.copies(m, GROUP), 1),
    "shuffle": (lambda m: tf.shuffle(m, USERS), 1),
}
"""Each transform of `dpaudit.mechanisms.transforms`, as applied here, with the steps of its neighbours."""

SET_ASIDE = {
    "composed_laplace": "compose of the built-in laplace: the cell (laplace, get_mechanism, compose)",
    "subsampled_laplace": "subsample of the built-in laplace: the cell (laplace, get_mechanism, subsample)",
    "shuffled_rr": "shuffle of the built-in randomized_response: the cell (randomized_response, get_mechanism, shuffle)",
    "group_laplace": "group of the built-in laplace: the cell (laplace, get_mechanism, group)",
    "group_pair": "the default pair of `group`, played by every group cell that audits a default pair",
    "Claim": "a value, not a mechanism",
    "BoxRecords": "a record domain that blackbox(records=...) takes, not a mechanism",
    "CategoryRecords": "a record domain that blackbox(records=...) takes, not a mechanism",
    "VectorRecords": "a record domain that blackbox(records=...) takes, not a mechanism",
    "Mechanism": "the class every constructor returns; built directly it is a built-in (get_mechanism's cells)",
    "Relation": "a value: every relation is a variant of the blackbox cells",
    "check_pair": "the neighbour check every cell runs before it audits",
    "register": "adds a built-in, which joins get_mechanism's cells by name",
    "list_mechanisms": "lists names, builds nothing",
    "DPAuditError": "an error class",
    "InvalidParameterError": "an error class",
    "MechanismError": "an error class",
    "UnknownMechanismError": "an error class",
}
"""Public names of `dpaudit.mechanisms` and its transforms that are not cells, each with the reason."""

CONSTRUCTORS = ("blackbox", "get_mechanism")


@dataclasses.dataclass(frozen=True)
class Cell:
    """One target, built one way, through one transform (or none)."""

    target: Target
    variant: tuple[str, str | None] | None
    transform: str | None

    def describe(self) -> str:
        how = "get_mechanism" if self.variant is None else f"blackbox[{self.variant[0]},{self.variant[1] or 'no null'}]"
        return f"{self.target.name}:{how}:{self.transform or 'plain'}"

    def null(self) -> Any:
        return self.target.zero if self.variant and self.variant[1] else None

    def mechanism(self) -> Mechanism:
        t = self.target
        if self.variant is None:
            base = get_mechanism(t.name, **t.builtin)
        else:
            base = blackbox(t.fn, epsilon=EPSILON, delta=t.delta, relation=self.variant[0], null_record=self.null(),
                            name=t.name)
        return TRANSFORMS[self.transform][0](base) if self.transform else base

    def steps(self) -> int:
        return TRANSFORMS[self.transform][1] if self.transform else 1

    def law(self, d: np.ndarray) -> Law:
        """Return the law of this cell's release on the dataset d."""
        if self.transform == "copies":
            return self.target.law(np.repeat(d, GROUP, axis=0))
        if self.transform == "subsample":
            return _subsampled(self.target.law, d)
        if self.transform == "shuffle":
            return _shuffled(d)
        return self.target.law(d)


def cells() -> list[Cell]:
    """Return every meaningful (target, construction, transform); `unplayed` says why the others are not."""
    out = []
    for target in targets():
        variants = [None] if target.builtin else list(VARIANTS)
        for variant, transform in itertools.product(variants, (None, *TRANSFORMS)):
            if not unplayed(target, transform):
                out.append(Cell(target, variant, transform))
    return out


def unplayed(target: Target, transform: str | None) -> str | None:
    """Return why a transform is not played on a target, or None when it is."""
    if transform == "shuffle" and not target.local:
        return "shuffle takes a local randomizer (one report of a one-record dataset)"
    if target.local and transform == "subsample":
        return "a local randomizer releases one report per record, so a subsample changes the output's shape"
    return None


def _subsampled(law: Callable[[np.ndarray], Law], d: np.ndarray) -> Law:
    """Return the mixture, over the Poisson subsamples of d at RATE, of the laws on each subsample."""
    parts: list[tuple[float, Any]] = []
    probabilities = None
    for kept in itertools.product((False, True), repeat=len(d)):
        kept = np.array(kept, dtype=bool)
        weight = RATE ** kept.sum() * (1 - RATE) ** (~kept).sum()
        inner = law(d[kept])
        if inner.kind == "categorical":
            probabilities = weight * inner.parts[0] + (0 if probabilities is None else probabilities)
        else:
            parts += [(weight * w, c) for w, c in inner.parts]
    return Law(inner.kind, inner.scale, (probabilities,) if probabilities is not None else tuple(parts))


def _shuffled(d: np.ndarray) -> Law:
    """Return the law of the number of 1-reports of binary randomized response run on each record of d."""
    keep = 1 / (1 + math.exp(-EPSILON))
    counts = np.array([1.0])
    for v in np.asarray(d, int):
        one = keep if v == 1 else 1 - keep
        counts = np.convolve(counts, [1 - one, one])
    return Law("categorical", 0.0, (counts,))


# ---- pairs


def draw_pair(cell: Cell, rng: np.random.Generator, steps: int, kind: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Return a pair `steps` steps of the cell's relation apart, drawn from the relation's definition (None: no such pair).

    kind "outside": one step, whose record is NaN (outside every declared domain); kind "replaced": `steps`
    records replaced in place by others, none of them null (under add-remove, two steps each).
    """
    record, relation = cell.target.record, cell.mechanism().claim.relation.value
    if cell.transform == "shuffle":
        d0 = np.array([record(rng) for _ in range(USERS)])
        d1 = d0.copy()
        d1[rng.choice(USERS, steps, replace=False)] ^= 1
        return (d0, d1) if kind != "outside" else (d0, np.where(d0 != d1, math.nan, d1))
    rows = [(v, v) for v in (record(rng) for _ in range(int(rng.integers(steps, steps + 3))))]
    if kind == "replaced":
        rows = _replaced(rows, record, rng, steps, cell.null())
        if rows is None:
            return None
    elif relation == "replace-one":
        for j in rng.choice(len(rows), steps, replace=False):
            rows[j] = (rows[j][0], _other(record, rng, rows[j][0]))
    else:
        for _ in range(steps):
            new = record(rng) if cell.null() is None else _other(record, rng, cell.null())
            old = cell.null() if cell.null() is not None and rng.random() < 0.5 else None
            rows.insert(int(rng.integers(0, len(rows) + 1)), (old, new))
    if kind == "outside":
        j = next(i for i, (a, b) in enumerate(rows) if a != b)
        rows[j] = (rows[j][0], math.nan)
    pair = [np.array([r[side] for r in rows if r[side] is not None]) for side in (0, 1)]
    return (pair[0], pair[1]) if rng.random() < 0.5 else (pair[1], pair[0])


def _replaced(rows: list, record: Callable[[np.random.Generator], Any], rng: np.random.Generator, steps: int,
              null: Any) -> list | None:
    """Return rows with `steps` of them replaced in place by records found nowhere else in either dataset (and not
    null), so no alignment saves a step: 2·steps add-remove steps apart. None when the records run out."""
    chosen = set(rng.choice(len(rows), steps, replace=False).tolist())
    kept = {v for j, r in enumerate(rows) if j not in chosen for v in r}
    for j in sorted(chosen):
        fresh = [v for v in (record(rng) for _ in range(50)) if v not in kept and v != null]
        if len(set(fresh)) < 2:
            return None
        old, new = list(dict.fromkeys(fresh))[:2]
        kept |= {old, new}
        rows[j] = (old, new)
    return rows


def _other(record: Callable[[np.random.Generator], Any], rng: np.random.Generator, *values: Any) -> Any:
    """Return a record drawn until it is none of `values`."""
    while (new := record(rng)) in values:
        pass
    return new


# ---- playing a cell


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one pair of a cell gave: a defect (or None), the certified lower bound and the pair's exact ε."""

    defect: str | None
    lower: float | None = None
    exact: float | None = None


def play(cell: Cell, seed: int, trials: int) -> list[Outcome]:
    """Return the outcomes of a valid pair (audited) and of invalid ones: one step too far, records replaced
    under add-remove (a user function's), a NaN record (a built-in's declared domain)."""
    from dpaudit.audit import audit_mechanism

    rng = np.random.default_rng([seed, zlib.crc32(cell.describe().encode())])
    mech, steps = cell.mechanism(), cell.steps()
    kinds = [("valid", steps), ("too far", steps + 1)] + ([("outside", steps)] if cell.variant is None else [])
    if cell.variant is not None and cell.variant[0] == "add-remove" and cell.transform != "shuffle":
        kinds.append(("replaced", steps))
    outcomes = []
    for kind, distance in kinds:
        pair = draw_pair(cell, rng, distance, kind)
        if pair is None:
            continue
        d0, d1 = pair
        try:
            result = audit_mechanism(mech, d0, d1, trials=trials, seed=seed)
        except InvalidParameterError as exc:
            defect = f"valid pair {d0.tolist()} / {d1.tolist()} refused: {exc}" if kind == "valid" else None
            outcomes.append(Outcome(defect))
            continue
        if kind != "valid":
            outcomes.append(Outcome(f"{kind} pair {d0.tolist()} / {d1.tolist()} accepted"))
            continue
        claim = mech.claim
        exact = exact_epsilon(cell.law(d0), cell.law(d1), claim.delta, COMPOSED if cell.transform == "compose" else 1)
        over_claim = exact > claim.epsilon + 1e-6
        defect = f"accepted pair {d0.tolist()} / {d1.tolist()} has exact ε {exact:.4f} > claim {claim.epsilon:.4f}"
        outcomes.append(Outcome(defect if over_claim else None, result.lower_bound.epsilon, exact))
    return outcomes


def play_replay(cell: Cell, seed: int, trials: int) -> Outcome | None:
    """Return the outcome of `audit_replay` on the cell's valid pair (None when the cell draws no valid pair)."""
    from dpaudit.audit import audit_replay

    return _play_valid(cell, seed, "audit_replay", lambda mech, d0, d1: audit_replay(mech, d0, d1, trials=trials, seed=seed))


def play_sequential_runs(cell: Cell, seed: int, runs: int) -> Outcome | None:
    """Return the outcome of a sequential multi-run game on the cell's valid pair, played as the mechanism's default pair
    and watched to its budget (`give_up=False`; None when the cell draws no valid pair)."""
    from dpaudit.attacks.games import MultiRun
    from dpaudit.audit import audit_canaries

    game = MultiRun(runs, sequential=True, give_up=False)

    def audit(mech, d0, d1):
        return audit_canaries(dataclasses.replace(mech, default_pair=(d0, d1)), game=game, canary="pair", seed=seed)

    return _play_valid(cell, seed, "the sequential multi-run game", audit)


def play_default(cell: Cell, seed: int, trials: int) -> Outcome | None:
    """Return the outcome of `audit_mechanism` given no trials on the cell's valid pair, the mechanism typed as one in
    another process (`ExternalMechanism`, whose draws are expensive): the sequential default, budgeted at `trials` and
    watched to its budget (`give_up=False`; None when the cell draws no valid pair)."""
    from dpaudit.audit import audit_mechanism
    from dpaudit.audit.audits.auto_trials import AutoBudget
    from dpaudit.mechanisms.external.processes import ExternalMechanism

    def audit(mech, d0, d1):
        fields = {f.name: getattr(mech, f.name) for f in dataclasses.fields(mech) if f.name != "event"}
        expensive = ExternalMechanism(**fields, event=mech.declared_event())
        result = audit_mechanism(expensive, d0, d1, seed=seed, budget=AutoBudget(max_trials=trials, give_up=False))
        assert result.phases.sequential.default, "the default of an expensive mechanism is the sequential audit"
        return result

    return _play_valid(cell, seed, "the sequential default", audit)


def _play_valid(cell: Cell, seed: int, by: str, audit: Callable[[Any, np.ndarray, np.ndarray], Any]) -> Outcome | None:
    """Return the outcome of `audit(mechanism, d0, d1)` on the cell's valid pair (None when the cell draws none)."""
    rng = np.random.default_rng([seed, zlib.crc32(cell.describe().encode())])
    mech = cell.mechanism()
    pair = draw_pair(cell, rng, cell.steps(), "valid")
    if pair is None:
        return None
    d0, d1 = pair
    try:
        result = audit(mech, d0, d1)
    except InvalidParameterError as exc:
        return Outcome(f"valid pair {d0.tolist()} / {d1.tolist()} refused by {by}: {exc}")
    exact = exact_epsilon(cell.law(d0), cell.law(d1), mech.claim.delta, COMPOSED if cell.transform == "compose" else 1)
    return Outcome(None, result.lower_bound.epsilon, exact)
