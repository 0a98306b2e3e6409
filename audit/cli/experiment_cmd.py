"""`dpaudit experiment NAME [--out DIR] [--quick] [--seed S]`: run a reproduction, write NAME.png and NAME.json."""

from __future__ import annotations

import argparse
from pathlib import Path

from dpaudit.audit.cli.experiment_registry import experiment_names, get_experiment, run_experiment
from rich.console import Console


def run(args: argparse.Namespace) -> int:
    """Run the experiment (or list them when NAME is left out); return 0."""
    console = Console()
    if args.name is None:
        for name in experiment_names():
            summary = (get_experiment(name).__doc__ or "").strip().splitlines()[0]
            print(f"{name:<25} {summary.split(':', 1)[-1].strip()}")
        return 0
    get_experiment(args.name)
    out = Path(args.out)
    with console.status(f"running {args.name}{' (quick)' if args.quick else ''}..."):
        run_experiment(args.name, out, quick=args.quick, seed=args.seed)
    console.print(f"wrote {out / (args.name + '.png')} and {out / (args.name + '.json')}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `experiment` subcommand."""
    parser = subparsers.add_parser("experiment", help="reproduce a published result (figure + JSON)")
    parser.add_argument("name", metavar="NAME", nargs="?", help="an experiment (omit to list them)")
    parser.add_argument("--out", metavar="DIR", default="dpaudit-out", help="output folder (default dpaudit-out/)")
    parser.add_argument("--quick", action="store_true", help="small trial budget (seconds; for tests)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.set_defaults(run=run)
