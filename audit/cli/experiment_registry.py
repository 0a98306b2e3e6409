"""Experiments are found through the `dpaudit.experiments` entry-point group, never imported by name.

The library (`dpaudit.audit`) does not depend on its reproductions: each
experiment is a module with `run(out_dir, *, quick, seed) -> dict`, declared
under `[project.entry-points."dpaudit.experiments"]` in pyproject.toml, so
another package can add its own the same way.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from dpaudit.errors import InvalidParameterError

GROUP = "dpaudit.experiments"


def _entry_points() -> dict[str, EntryPoint]:
    return {point.name: point for point in entry_points(group=GROUP)}


def experiment_names() -> list[str]:
    """Return the names of the installed experiments, sorted."""
    return sorted(_entry_points())


def get_experiment(name: str) -> ModuleType:
    """Return the module of experiment `name`, or raise InvalidParameterError listing the names."""
    points = _entry_points()
    if name not in points:
        raise InvalidParameterError(f"There is no experiment named {name!r}; choose one of {', '.join(points)}.")
    return points[name].load()


def run_experiment(name: str, out_dir: str | Path, *, quick: bool = False, seed: int = 0) -> dict[str, Any]:
    """Run experiment `name`, writing NAME.png and NAME.json into `out_dir`; return the JSON's content."""
    module = get_experiment(name)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return module.run(out, quick=quick, seed=seed)
