"""A replay made in a library's own environment: the draws recorded and replayed at the library's one interception point.

A library adapter whose sampler has a `replay(d0, d1, rng)` method (the
diffprivlib adapters: `dpaudit.mechanisms.adapters.diffprivlib.Requests`)
replays in its own process, where the library draws: one run on d0 with a
recording random state, one on d1 with the same draws, and it sends back
a plain record (`mechanisms/scripts/replay_side.py`: the releases, each
draw's method, arguments and noise, the calls that differed, the sources
drawn from besides the state). `recorded_elsewhere` reads that record
into the types of a replay made here (`Draw`, `Divergence`), so the same
comparison (`replay_pair`) finds the same kinds of findings.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from dpaudit.attacks.replay.draws import DATA, Draw
from dpaudit.attacks.replay.findings import Divergence
from dpaudit.attacks.replay.outside import not_replayable
from dpaudit.mechanisms.base import Mechanism, fresh_copy

__all__ = ["Elsewhere", "recorded_elsewhere", "replays_elsewhere"]


@dataclasses.dataclass(frozen=True)
class Elsewhere:
    """What the library's environment sent back: the releases (release1 None with `failure` when d1 raised), the
    draws recorded on d0, and the calls on d1 that differed from them."""

    release0: Any
    release1: Any
    failure: str
    tape: list[Draw]
    divergences: list[Divergence]


def replays_elsewhere(mech: Mechanism) -> bool:
    """Return True when the mechanism's sampler replays in its own environment (it has a `replay` method)."""
    return callable(getattr(mech.sampler, "replay", None))


def _arguments(method: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Return a draw's arguments, a data argument's {"items": n} read as the count n (the law it draws from)."""
    data = DATA.get(method)
    if data is not None and isinstance(arguments.get(data), dict):
        return {**arguments, data: int(arguments[data]["items"])}
    return dict(arguments)


def _draw(entry: dict[str, Any]) -> Draw:
    noise = np.asarray(entry["noise"]) if isinstance(entry["noise"], list) else entry["noise"]
    return Draw(entry["method"], _arguments(entry["method"], entry["arguments"]), noise, noise)


def recorded_elsewhere(mech: Mechanism, d0: Any, d1: Any, *, seed: np.random.SeedSequence) -> Elsewhere:
    """Return the replay of (d0, d1) made in the mechanism's own environment, read into a replay's types.

    Raises:
        NotReplayable: when a run there drew from a source besides the random state the library was handed.
    """
    record = mech.sampler.replay(fresh_copy(d0), fresh_copy(d1), np.random.default_rng(seed))
    if record["outside"]:
        raise not_replayable(mech.name, list(record["outside"]))
    tape = [_draw(entry) for entry in record["tape"]]
    divergences = []
    for d in record["divergences"]:
        on_d = tape[d["index"]].describe() if d["index"] < len(tape) else ""
        on_d1 = Draw(d["method"], _arguments(d["method"], d["arguments"]), None, None).describe() if d["method"] else ""
        divergences.append(Divergence(int(d["index"]), d["kind"], on_d, on_d1))
    release1 = None if record["release1"] is None else _value(record["release1"])
    return Elsewhere(_value(record["release0"]), release1, record["failure"], tape, divergences)


def _value(release: Any) -> Any:
    """Return a release read from JSON: a list as an array, a number or text as it is."""
    return np.asarray(release) if isinstance(release, list) else release
