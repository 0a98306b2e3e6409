"""Reproductions of published results, each a module with `run(out_dir, *, quick=False, seed=0) -> dict`.

`run` writes `NAME.png` and `NAME.json` into `out_dir` and returns the JSON's
content; `quick` shrinks the trial budget (seconds, for tests); the full run
takes a few minutes on 2 cores. Experiments are declared as entry points
(group `dpaudit.experiments` in pyproject.toml) and found through
`dpaudit.audit.cli.experiment_registry`, so the library never imports them.
"""

from dpaudit.audit.cli.experiment_registry import experiment_names, get_experiment, run_experiment

__all__ = ["experiment_names", "get_experiment", "run_experiment"]
