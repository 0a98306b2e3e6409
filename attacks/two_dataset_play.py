"""The two-dataset game as played: choose a test on some outputs, count its errors on fresh ones (or count them all).

The attack's parts live beside it (sampling, screening of wide outputs, the
selection budget, candidate tests); this module runs its phases on a
backend and returns the evidence with what each phase did. What the
estimator wants of the game (the objective that chooses the test, the
direction a ratio is certified in, whether every output is counted) comes
down from the entry point as a `Steering`: the game never imports the audit
layer. Every phase draws from its own named seed stream, fixed by the audit's
seed (`Streams`), so the same seed gives the same evidence on any backend.

- held-out counts (the two-rates and ratio intervals): probe the output's shape;
  screen wide outputs; draw the selection sample (grown for discrete
  outputs); choose the test on it; count its errors on Poisson(n) fresh
  outputs per dataset in seeded chunks → `HeldOutCounts`.
- histogram (the bands interval): a first sample places the grid of thresholds and is
  counted too; the rest in seeded chunks → `OutputHistogram`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable, Iterator

import numpy as np
from dpaudit.attacks.distinguish import Choice, DistinguishingTest, Objective, distinct_outputs, is_discrete, select_test
from dpaudit.attacks.held_out_counts import CountRejections, HeldOutCounts
from dpaudit.attacks.output_histogram import CountCells, OutputHistogram, cell_counts, grid_from
from dpaudit.attacks.sampling import chunk_sizes, draw, per_chunk
from dpaudit.attacks.screening import Screen, columns, on_whole_outputs, screen_coordinates
from dpaudit.attacks.selection_budget import ATOM_LEVEL, discrete_selection_size, screening_size, selection_level, split_budget
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.execution.backends import Backend, run_chunks
from dpaudit.execution.interrupted import Interrupted
from dpaudit.execution.reproducibility import streams_warning
from dpaudit.execution.runner import seeds
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.outputs import check_shape

__all__ = ["Chosen", "PlayedPair", "Setting", "Steering", "Streams", "choose", "count_errors", "play"]


@dataclasses.dataclass(frozen=True)
class Streams:
    """The seed streams of one two-dataset audit, by phase: children of SeedSequence(seed) by their spawn keys.

    selection (0,), its growth for discrete outputs (0, 0), the shape probe
    (0, 1), screening (0, 2), the screened selection (0, 3); held-out chunk
    i is child (i + 1,) (`runner.seeds`).
    """

    seed: int

    def child(self, *key: int) -> np.random.SeedSequence:
        """Return the stream with spawn key `key` of SeedSequence(seed)."""
        return np.random.SeedSequence(self.seed, spawn_key=key)

    def chunks(self, count: int) -> list[np.random.SeedSequence]:
        """Return the streams of `count` held-out chunks."""
        return seeds(self.seed, count)[1:]


@dataclasses.dataclass(frozen=True)
class Steering:
    """What the estimator that will certify the evidence wants of the game, handed down by the entry point.

    `objective(n, level=level)` returns the objective `select_test`
    maximises for a test whose errors will be counted on Poisson(n)
    held-out outputs, its selection counts taken at confidence `level`;
    `direction(choice, n, level=level)`, when given, returns which direction
    of a ratio the held-out counts will certify, fixed from the selection
    counts before any held-out output; `histogram` plays without a split,
    every output counted into an `OutputHistogram` (scalar outputs only).
    Each only steers the choice: soundness comes from the estimator.
    """

    objective: Callable[..., Objective]
    direction: Callable[..., int] | None = None
    histogram: bool = False


@dataclasses.dataclass(frozen=True)
class Setting:
    """Everything the game needs: the mechanism and its pair, the trials, the seed, the estimator's steering, where it runs."""

    mechanism: Mechanism
    d0: Any
    d1: Any
    trials: int
    seed: int
    steering: Steering
    backend: Backend
    progress: Callable[[int], None] | None = None
    global_streams: Any = None
    """The global generators' positions at the start (`reproducibility.global_streams`), to warn when the mechanism moved them."""


@dataclasses.dataclass(frozen=True)
class PlayedPair:
    """What the two-dataset game produced: its evidence, the test, and what the phases spent (membership games: `played.Played`)."""

    evidence: HeldOutCounts | OutputHistogram
    test: str
    selection: int
    held_out: int
    screening: dict[str, Any] | None = None
    interrupted: bool = False
    warning: str | None = None


@contextlib.contextmanager
def _selection_phase() -> Iterator[None]:
    """Re-raise a `MechanismError` raised in the block with "(selection phase)" appended."""
    try:
        yield
    except MechanismError as exc:
        raise MechanismError(f"{str(exc).rstrip('.')} (selection phase).") from exc


def output_shape(mech: Mechanism, d0: Any, streams: Streams) -> tuple[int, ...]:
    """Return the shape of one output, from one draw on the probe stream."""
    with _selection_phase():
        probe = mech.sample(d0, 1, np.random.default_rng(streams.child(0, 1)))
    return tuple(probe.shape[1:])


def _selection(mech: Mechanism, d0: Any, d1: Any, size: int, seed: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    with _selection_phase():
        out0, out1 = draw(mech, d0, d1, size, seed)
    if out0.shape[1:] != out1.shape[1:]:
        raise MechanismError(
            f"Mechanism '{mech.name}' returned outputs of changing shape: {out0.shape[1:]} on d0, {out1.shape[1:]} on d1."
        )
    return out0, out1


def _draw_selection(s: Setting, size: int, seed: np.random.SeedSequence, kept: Screen | None,
                    elements: int) -> tuple[np.ndarray, np.ndarray]:
    """Return `size` selection outputs per dataset: whole, or, in chunks (`seed`'s children), the screened view of wide ones."""
    if kept is None:
        return _selection(s.mechanism, s.d0, s.d1, size, seed)
    sizes = chunk_sizes(size, per_chunk(elements))
    parts = [[columns(out, kept) for out in _selection(s.mechanism, s.d0, s.d1, n, child)]
             for n, child in zip(sizes, seed.spawn(len(sizes)))]
    return tuple(np.concatenate([p[k] for p in parts]) for k in (0, 1))


def _screen(s: Setting, streams: Streams, elements: int) -> tuple[Screen | None, int]:
    """Return the `Screen` of wide outputs (`dpaudit.attacks.screening`) and the outputs it drew, or (None, 0)."""
    size = screening_size(s.trials, elements)
    if not size:
        return None, 0
    with _selection_phase():
        kept = screen_coordinates(s.mechanism, s.d0, s.d1, size=size, elements=elements, seed=streams.child(0, 2))
    return kept, size


def _choose(s: Setting, streams: Streams, elements: int, kept: Screen | None,
            n_screen: int) -> tuple[Choice, int, int, int | None]:
    """Return the chosen test, the selection outputs it used, the held-out size and the ratio direction."""
    n_select, n_held = split_budget(s.trials - n_screen, elements if kept is None else kept.width())
    out0, out1 = _draw_selection(s, n_select, streams.child(0) if kept is None else streams.child(0, 3), kept, elements)
    categories = None
    if is_discrete(out0, out1):
        size = discrete_selection_size(s.trials - n_screen, int(np.prod(out0.shape[1:], dtype=int)))
        if size > len(out0):
            more0, more1 = _draw_selection(s, size - len(out0), streams.child(0, 0), kept, elements)
            check_shape(s.mechanism.name, more0, out0.shape[1:], "in the selection phase")
            out0, out1 = np.concatenate([out0, more0]), np.concatenate([out1, more1])
            n_select, n_held = len(out0), s.trials - n_screen - len(out0)
        categories = distinct_outputs(out0, out1)
    level, steer = selection_level(categories), s.steering
    choice = select_test(out0, out1, objective=steer.objective(n_held, level=level), categories=categories,
                         atom_objective=steer.objective(n_held, level=ATOM_LEVEL))
    if kept is not None:
        whole = dataclasses.replace(choice.test, scorer=on_whole_outputs(choice.test.scorer, kept), texts=None)
        choice = dataclasses.replace(choice, test=whole)
    direction = None if steer.direction is None else steer.direction(choice, n_held, level=level)
    return choice, n_select + n_screen, n_held, direction


@dataclasses.dataclass(frozen=True)
class Chosen:
    """A test chosen on a selection sample, before any held-out output: what `count_errors` needs to judge it.

    `fpr` and `fnr` are its rates on the selection outputs that chose it
    (biased low by the choice: a guess, never evidence).
    """

    test: DistinguishingTest
    shape: tuple[int, ...]
    selection: int
    held_out: int
    fpr: float
    fnr: float
    screening: dict[str, Any] | None
    warning: str | None


def choose(s: Setting) -> Chosen:
    """Play the selection phase of the held-out game alone (screening, the selection sample, the choice of the test)."""
    streams = Streams(s.seed)
    shape = output_shape(s.mechanism, s.d0, streams)
    elements = int(np.prod(shape, dtype=int))
    kept, n_screen = _screen(s, streams, elements)
    choice, n_select, n_held, _ = _choose(s, streams, elements, kept, n_screen)
    screening = None if kept is None else {"trials": n_screen, "coordinates": kept.kept.tolist()}
    return Chosen(choice.test, shape, n_select, n_held, float(choice.fpr), float(choice.fnr), screening,
                  streams_warning(s.global_streams))


def count_errors(s: Setting, chosen: Chosen, sizes: list[int], first: int) -> np.ndarray:
    """Return the counts (`HeldOutCounts.from_rejections`) of held-out chunks `first`, `first` + 1, … of `sizes`.

    Chunk i draws from the stream of held-out chunk i of `s.seed` (`Streams`), so chunks are never drawn twice.

    Raises:
        Interrupted: on Ctrl-C, with the counts of the chunks that finished.
    """
    streams = Streams(s.seed)
    chunk_seeds = [streams.child(first + i + 1) for i in range(len(sizes))]
    return run_chunks(CountRejections(s.mechanism, s.d0, s.d1, chosen.test, chosen.shape), sizes, chunk_seeds,
                      name=s.mechanism.name, seed=s.seed, backend=s.backend, progress=s.progress)


def _held_out(s: Setting, shape: tuple[int, ...], streams: Streams) -> PlayedPair:
    """Play the split game: choose a test, then count its errors on fresh outputs in seeded chunks."""
    elements = int(np.prod(shape, dtype=int))
    kept, n_screen = _screen(s, streams, elements)
    choice, n_select, n_held, direction = _choose(s, streams, elements, kept, n_screen)
    test = choice.test
    screening = None if kept is None else {"trials": n_screen, "coordinates": kept.kept.tolist()}
    sizes = chunk_sizes(n_held, per_chunk(elements))
    if s.progress:
        s.progress(n_select)
    warning = streams_warning(s.global_streams)  # the selection phase ran here, in process, whatever the backend

    def played(counts: np.ndarray, held: int, interrupted: bool = False) -> PlayedPair:
        return PlayedPair(HeldOutCounts.from_rejections(counts, direction=direction), test.describe(), n_select, held,
                      screening, interrupted, warning)

    try:
        counts = run_chunks(CountRejections(s.mechanism, s.d0, s.d1, test, shape), sizes, streams.chunks(len(sizes)),
                            name=s.mechanism.name, seed=s.seed, backend=s.backend, progress=s.progress)
    except Interrupted as stop:
        raise Interrupted(played(stop.partial, stop.done, True) if stop.done else None, done=stop.done,
                          total=n_held) from None
    return played(counts, n_held)


def _bands(s: Setting, shape: tuple[int, ...], streams: Streams) -> PlayedPair:
    """Play the game without a split: every output counted against a grid placed on the first sample."""
    if int(np.prod(shape, dtype=int)) != 1:
        raise InvalidParameterError(
            f"The bands interval needs scalar outputs; mechanism '{s.mechanism.name}' returns outputs of shape {shape}."
        )
    n_first, n_rest = split_budget(s.trials)
    out0, out1 = _selection(s.mechanism, s.d0, s.d1, n_first, streams.child(0))
    grid = grid_from(out0, out1)
    first = np.concatenate([cell_counts(grid, out0), cell_counts(grid, out1)])
    sizes = chunk_sizes(n_rest, per_chunk(1))
    if s.progress:
        s.progress(n_first)
    warning = streams_warning(s.global_streams)

    def played(counts: np.ndarray, trials: int, interrupted: bool = False) -> PlayedPair:
        hist = OutputHistogram.from_vector(grid, first + counts)
        return PlayedPair(hist, "", 0, trials, None, interrupted, warning)

    try:
        counts = run_chunks(CountCells(s.mechanism, s.d0, s.d1, grid, shape), sizes, streams.chunks(len(sizes)),
                            name=s.mechanism.name, seed=s.seed, backend=s.backend, progress=s.progress)
    except Interrupted as stop:
        raise Interrupted(played(stop.partial, n_first + stop.done, True), done=n_first + stop.done,
                          total=s.trials) from None
    return played(counts, s.trials)


def play(setting: Setting) -> PlayedPair:
    """Play the two-dataset game `setting` describes; return its evidence and what its phases did.

    Raises:
        Interrupted: on Ctrl-C in the held-out phase, with the `PlayedPair` of the chunks that finished (or None).
        MechanismError: when the mechanism raises or changes its output shape.
    """
    streams = Streams(setting.seed)
    shape = output_shape(setting.mechanism, setting.d0, streams)
    if setting.steering.histogram:
        return _bands(setting, shape, streams)
    return _held_out(setting, shape, streams)
