"""Reproductions of published results: `run_experiment(name, out_dir, quick=, seed=)`.

Each experiment is a module with `run(out_dir: Path, *, quick: bool = False,
seed: int = 0) -> dict` that writes `NAME.png` and `NAME.json` into `out_dir`
and returns the JSON's content. `quick` shrinks the trial budget (seconds,
for tests); the full run takes a few minutes on 2 cores.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

from dpaudit.mechanisms.errors import InvalidParameterError

EXPERIMENTS = {
    "composition-region": "dpaudit.experiments.composition_region",
    "amplification-sampling": "dpaudit.experiments.amplification_sampling",
    "composition-laplace": "dpaudit.experiments.composition_laplace",
    "pure-to-renyi": "dpaudit.experiments.pure_to_renyi",
    "amplification-shuffling": "dpaudit.experiments.amplification_shuffling",
    "group-privacy": "dpaudit.experiments.group_privacy",
    "one-run": "dpaudit.experiments.one_run_idealized",
    "fingerprinting": "dpaudit.experiments.fingerprinting",
    "dpsgd": "dpaudit.experiments.dpsgd",
}


def get_experiment(name: str) -> ModuleType:
    """Return the module of experiment `name`, or raise InvalidParameterError listing the names."""
    if name not in EXPERIMENTS:
        raise InvalidParameterError(
            f"There is no experiment named {name!r}; choose one of {', '.join(EXPERIMENTS)}."
        )
    return importlib.import_module(EXPERIMENTS[name])


def run_experiment(name: str, out_dir: str | Path, *, quick: bool = False, seed: int = 0) -> dict[str, Any]:
    """Run experiment `name`, writing NAME.png and NAME.json into `out_dir`; return the JSON's content."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return get_experiment(name).run(out, quick=quick, seed=seed)
