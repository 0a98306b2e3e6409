"""The canaries a membership game plays: their design from a mechanism's declared records, and the multi-run game's modes.

A canary is a record the mechanism's claim is about (`Mechanism.records`),
never its null record nor one that moves the release by nothing; the
modes say which canaries a multi-run game plays and how its runs are scored.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from dpaudit.attacks.canary import (
    CanarySet,
    box_canaries,
    box_ends,
    category_canaries,
    fresh_canary_game,
    membership_game,
    pair_canary,
    sparse_canaries,
    vector_canaries,
)
from dpaudit.attacks.canary_scores import CanaryScorer, InnerProduct, OutputStatistic
from dpaudit.attacks.observations import Observations
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Mechanism, Relation, check_pair
from dpaudit.mechanisms.records import BoxRecords, CategoryRecords, VectorRecords

__all__ = ["BASE_RECORDS", "CANARY_MODES", "DEFAULT_DIM", "canary_design", "multi_run_observations"]

CANARY_MODES = ("auto", "fixed", "random", "pair")
DEFAULT_DIM = 1000
BASE_RECORDS = 100


def canary_design(mech: Mechanism, m: int, *, dim: int | None, norm: float | None, rng: np.random.Generator,
                   worst: bool = False) -> CanarySet:
    """Return m canaries made from the records `mech` declares (`Mechanism.records`), none of them its null record.

    `CategoryRecords`: one category per canary, skipping the null record.
    `VectorRecords`: random ±norm/√dim vectors, or ±norm·e_i for ℓ1
    clipping (`order` 1), of the declared width (else `dim`, default
    DEFAULT_DIM, or m for more sparse canaries) and norm (else the declared
    one). `BoxRecords`: corners of the box away from its near corner
    (`box_ends`: the end nearer the null record, else 0, in every entry);
    `worst`, the far corner, which moves a sum, a count and a mean of the
    base records alike. Vector and box designs keep BASE_RECORDS records
    (null vectors; the near corner) in every run, so that mechanisms whose
    noise depends on the dataset's size see a realistic one. Under
    replace-one an OUT canary's slot holds its negation, the opposite
    corner, or a spare category. The games then check every dataset against
    the mechanism's neighbour check before any run.

    Raises:
        InvalidParameterError: when `mech` declares no records, or `dim`/`norm` contradict them.
    """
    spec, replace = mech.records, mech.claim.relation is Relation.REPLACE_ONE
    if isinstance(spec, CategoryRecords):
        return category_canaries(m, bins=spec.count, replace=replace, null_record=mech.null_record)
    if isinstance(spec, BoxRecords):
        if norm is not None or (dim is not None and dim != spec.width):
            raise InvalidParameterError(
                f"Mechanism '{mech.name}' takes records of {spec.width} numbers in [{spec.low:g}, {spec.high:g}]; "
                "its canaries are corners of that box, so neither dim nor norm can be chosen."
            )
        design = box_canaries(m, spec=spec, rng=rng, replace=replace, null_record=mech.null_record, worst=worst)
        return dataclasses.replace(design, base=np.tile(box_ends(spec, mech.null_record)[0], (BASE_RECORDS, 1)))
    if isinstance(spec, VectorRecords):
        make = sparse_canaries if spec.order == 1 else vector_canaries
        width = _record_width(mech, spec, dim, m if spec.order == 1 else 0)
        design = make(m, dim=width, norm=spec.norm if norm is None else norm, rng=rng, replace=replace)
        return dataclasses.replace(design, base=np.zeros((BASE_RECORDS, design.records.shape[1])))
    raise InvalidParameterError(
        f"Mechanism '{mech.name}' declares no records, so dpaudit cannot make canaries that its claim is about: "
        "declare them (blackbox(..., records=BoxRecords(low, high)), VectorRecords or CategoryRecords), "
        "or play its default pair (canary='pair')."
    )


def _record_width(mech: Mechanism, spec: VectorRecords, dim: int | None, at_least: int = 0) -> int:
    """Return the canaries' dimension: the declared width, else `dim`, else max(DEFAULT_DIM, `at_least`).

    Only a width nothing fixes grows with the canaries (`at_least`: one
    entry per sparse canary); a declared width or a given `dim` is kept.
    """
    if spec.width is None:
        return max(DEFAULT_DIM, at_least) if dim is None else dim
    if dim is not None and dim != spec.width:
        raise InvalidParameterError(
            f"Mechanism '{mech.name}' takes records of {spec.width} numbers, so canaries have dimension {spec.width}; got dim={dim}."
        )
    return spec.width


def multi_run_observations(mech: Mechanism, mode: str, runs: int, scorer: CanaryScorer | None, dim: int | None,
                           norm: float | None, canary_rng: np.random.Generator, game_rng: np.random.Generator,
                           mapper: Any) -> tuple[Observations, CanaryScorer]:
    """Return the scores of a multi-run canary game in `mode` (CANARY_MODES) and the scorer that gave them.

    "auto" plays "fixed" when `mech` declares its records, else "pair";
    "pair" plays the default neighbouring pair (score: the output's sum),
    "fixed" one canary of the far corner, "random" a fresh canary each run
    (score: the inner product with the canary). `mapper` spreads the runs
    (`dpaudit.execution.execution.spread`).
    """
    if mode == "auto":
        mode = "pair" if mech.records is None else "fixed"
    if mode == "pair":
        if mech.default_pair is None:
            raise InvalidParameterError(f"Mechanism '{mech.name}' has no default neighbouring pair to play on.")
        canary = pair_canary(*check_pair(mech, *mech.default_pair))
        chosen = scorer or OutputStatistic("sum")
        return membership_game(mech, canary, runs=runs, scorer=chosen, rng=game_rng, mapper=mapper), chosen
    chosen = scorer or InnerProduct()
    if mode == "fixed":
        canary = canary_design(mech, 1, dim=dim, norm=norm, rng=canary_rng, worst=True)
        return membership_game(mech, canary, runs=runs, scorer=chosen, rng=game_rng), chosen
    if mode == "random":
        def make(rng: np.random.Generator) -> CanarySet:
            return canary_design(mech, 1, dim=dim, norm=norm, rng=rng)
        return fresh_canary_game(mech, make, runs=runs, scorer=chosen, rng=game_rng, mapper=mapper), chosen
    raise InvalidParameterError(f"The canary mode must be one of {', '.join(CANARY_MODES)}; got {mode!r} instead.")
