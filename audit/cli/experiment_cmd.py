"""`dpaudit experiment NAME [--out DIR] [--quick] [--seed S]`: run a reproduction, write NAME.png and NAME.json."""

from __future__ import annotations

import argparse
from pathlib import Path

from dpaudit.audit.cli.common import add_output_folder, add_seed, check_output_paths


def run(args: argparse.Namespace) -> int:
    """Run the experiment (or list them when NAME is left out); return 0."""
    from dpaudit.audit.cli.experiment_registry import experiment_names, get_experiment, run_experiment
    from rich.console import Console

    console = Console()
    if args.name is None:
        for name in experiment_names():
            summary = (get_experiment(name).__doc__ or "").strip().splitlines()[0]
            print(f"{name:<25} {summary.split(':', 1)[-1].strip()}")
        return 0
    get_experiment(args.name)
    check_output_paths(args)
    out = Path(args.out)
    with console.status(f"running {args.name}{' (quick)' if args.quick else ''}..."):
        run_experiment(args.name, out, quick=args.quick, seed=args.seed)
    console.print(f"wrote {out / (args.name + '.png')} and {out / (args.name + '.json')}")
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `dpaudit experiment`."""
    parser.add_argument("name", metavar="NAME", nargs="?", help="an experiment (omit to list them)")
    add_output_folder(parser, "NAME.png and NAME.json go into DIR (default dpaudit-out/)", default="dpaudit-out")
    parser.add_argument("--quick", action="store_true", help="small trial budget (seconds; for tests)")
    add_seed(parser)
    parser.set_defaults(run=run)
