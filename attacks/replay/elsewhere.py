"""A replay made in a library's own environment: the draws recorded and replayed at the library's one interception point.

A library adapter whose sampler has a `replay(d0, d1, rng)` method (the
diffprivlib adapters: `dpaudit.mechanisms.adapters.diffprivlib.Requests`)
replays in its own process, where the library draws: one run on d0 with a
recording random state, one on d1 with the same draws, and it sends back
a plain record (`mechanisms/scripts/replay_side.py`: the releases, each
draw's method, arguments and noise, the calls that differed, the sources
drawn from besides the state). `recorded_elsewhere` reads that record
into the types of a replay made here (`Draw`, `Divergence`), so the same
comparison (`replay_pair`) finds the same kinds of findings. The draws a
library makes there may be raw material (diffprivlib's Laplace is four
uniforms it transforms, its Gaussian two standard normals it scales), so
an adapter may declare the law of its released noise (`declared_law`:
`released_noise` on the sampler), and a move of the release is priced by
it; without one, a move of the release is "not priced" (no run more there
checks that the release moves one for one with the draws under it).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from dpaudit.attacks.replay.draws import DATA, Draw
from dpaudit.attacks.replay.findings import Divergence
from dpaudit.attacks.replay.outside import not_replayable
from dpaudit.attacks.replay.releases import numbers
from dpaudit.mechanisms.base import Mechanism, fresh_copy

__all__ = ["Elsewhere", "declared_law", "recorded_elsewhere", "replays_elsewhere"]


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


def declared_law(mech: Mechanism, release0: Any) -> list[Draw] | None:
    """Return the law of the released noise the mechanism's sampler declares (`released_noise`), as one draw the size of
    the release; [] when it declares that no recorded law is the release's noise (False); None when it declares nothing.

    Sound to price a move of the release by it when the release is the value
    plus noise of that law whose scale the data does not set (the replay
    froze the draws that make it): then the release moves as the value
    does. `released_noise` is {"method": a law of `noise_shift.PURE` or
    `GAUSSIAN`, and its arguments ("scale", or "p" of a geometric)}, or
    False for a release that is not the value plus its draws (Opacus'
    weights: the noise divided by the expected batch size, then SGD steps).
    """
    law = getattr(mech.sampler, "released_noise", None)
    if law is None or law is False:
        return None if law is None else []
    arguments = {k: v for k, v in law.items() if k != "method"}
    return [Draw(law["method"], {"loc": 0.0, **arguments, "size": None}, None, np.zeros(numbers(release0).shape))]
