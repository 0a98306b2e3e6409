"""The input-blind oracle (`oracle_grid`): no entry point, with any of its options, flags a release that ignores its input.

Default run: every value of every axis once (`one_factor`), claim ε = 0.5,
against a true ε of 0: a sound audit exceeds it with a probability far
below anything a test could see, so any violation is a defect. Slow run:
the all-pairs grid over seeds at claim ε = 0, where each audit may be a
false positive with probability at most 1 − confidence = 0.05; the count
over the grid must stay within the binomial's 0.999 quantile.
"""

import inspect
import time

import numpy as np
import oracle_grid as grid
import pytest
from scipy.stats import binom

ENTRIES = {entry.name: entry for entry in grid.entries()}
SLOW_SEEDS = 4


def _cells(design):
    return [(name, cell) for name, entry in ENTRIES.items() for cell in design(entry)]


def _one_factor(entry):
    return grid.one_factor(entry.axes)


def _all_pairs(entry):
    return grid.all_pairs(entry.axes, np.random.default_rng(0))


def _id(case):
    name, cell = case
    return name + ":" + ",".join(f"{k}={getattr(v, 'describe', lambda: v)()}" for k, v in cell.items())


def _needs(name: str, cell: dict) -> None:
    if (cell.get("target") in ("opacus-hook", "opacus", "dpaudit") or name == "dpaudit dpsgd") and name.endswith("dpsgd"):
        pytest.importorskip("torch")
    if cell.get("target") in ("opacus-hook", "opacus"):
        pytest.importorskip("opacus")
    if cell.get("workers"):
        pytest.importorskip("distributed")
    if cell.get("target") == "external" and cell.get("output") == "complex_number":
        pytest.skip("the external protocol carries what JSON holds: the worker refuses a complex output in one sentence")


@pytest.mark.parametrize("case", _cells(_one_factor), ids=_id)
def test_no_option_flags_a_blind_release(case):
    name, cell = case
    _needs(name, cell)
    outcome = ENTRIES[name].run(cell, 0, 0.5)
    assert outcome in grid.ACCEPTABLE, f"{name} {cell}: {outcome}"


@pytest.mark.parametrize(("name", "cell"), [
    ("audit_mechanism", {"target": "external", "trials": "default"}),
    ("dpaudit audit", {"--python": "PYTHON", "--trials": None}),
    ("dpaudit audit", {"--python": "PYTHON", "--trials": None, "--max-trials": "400000"}),
])
def test_the_sequential_default_of_an_expensive_blind_target_flags_nothing(name, cell):
    """One factor plays `trials` left out on the base target, a cheap one; the default of an expensive one (another
    process: sequential) is the cell of two values here, as the all-pairs grid plays it among others."""
    entry = ENTRIES[name]
    outcome = entry.run({**grid.one_factor(entry.axes)[0], **cell}, 0, 0.5)
    assert outcome == grid.CONSISTENT, f"{name} {cell}: {outcome}"


@pytest.mark.slow
def test_the_all_pairs_grid_over_seeds_flags_at_most_its_level():
    start, outcomes = time.perf_counter(), []
    for name, cell in _cells(_all_pairs):
        for seed in range(SLOW_SEEDS):
            try:
                _needs(name, cell)
            except pytest.skip.Exception:
                continue
            outcomes.append(ENTRIES[name].run(cell, seed, 0.0))
            if outcomes[-1].startswith("error"):
                outcomes[-1] += f" in {_id((name, cell))}, seed {seed}"
    errors = [o for o in outcomes if o.startswith("error")]
    played = [o for o in outcomes if o in ("consistent", "violation", "violation-under-assumption")]
    flagged = sum(o.startswith("violation") for o in played)
    print(f"all-pairs grid: {len(outcomes)} audits, {len(played)} played, {flagged} flagged, "
          f"{len(outcomes) - len(played) - len(errors)} refused, {time.perf_counter() - start:.0f} s")
    assert not errors, errors[:5]
    assert flagged <= binom.ppf(0.999, len(played), 0.05)


def _parameters(fn) -> set[str]:
    return set(inspect.signature(fn).parameters)


def test_every_parameter_of_every_entry_point_is_an_axis_or_set_aside_with_a_reason():
    from dpaudit.audit import audit_canaries, audit_dpsgd, audit_mechanism, audit_replay, audit_scores, audit_tracing
    from dpaudit.testing import assert_private

    functions = {"audit_mechanism": audit_mechanism, "audit_canaries": audit_canaries, "audit_scores": audit_scores,
                 "audit_tracing": audit_tracing, "audit_dpsgd": audit_dpsgd, "assert_private": assert_private,
                 "audit_replay": audit_replay}
    for name, fn in functions.items():
        entry = ENTRIES[name]
        missing = _parameters(fn) - set(entry.axes) - set(entry.fixed)
        assert not missing, f"{name} has parameters the oracle does not play: {sorted(missing)}"
        assert all(entry.fixed.values())


def test_every_flag_of_every_audit_subcommand_is_an_axis_or_set_aside_with_a_reason():
    from dpaudit.audit.cli import COMMANDS

    audits = {name for name in COMMANDS if name not in ("list", "suite", "bounds", "experiment", "env")}
    assert audits == set(grid.CLI_TARGETS)
    for command in audits:
        _, fixed = grid.cli_axes(command)
        unexplained = [flag for flag, reason in fixed.items() if not reason]
        assert not unexplained, f"dpaudit {command} has flags the oracle does not play: {unexplained}"


def test_all_pairs_covers_every_pair_of_values():
    axes = {"a": (0, 1, 2), "b": ("x", "y"), "c": (True, False), "d": (None, 5, 6, 7)}
    cells = grid.all_pairs(axes, np.random.default_rng(1))
    for (p, vp), (q, vq) in ((a, b) for a in axes.items() for b in axes.items() if a[0] < b[0]):
        assert {(x, y) for x in vp for y in vq} <= {(c[p], c[q]) for c in cells}
    assert len(cells) < np.prod([len(v) for v in axes.values()])


def test_one_factor_plays_every_value_of_every_axis():
    axes = {"a": (0, 1, 2), "b": ("x", "y")}
    cells = grid.one_factor(axes)
    assert len(cells) == 4 and all({c[k] for c in cells} == set(v) for k, v in axes.items())
