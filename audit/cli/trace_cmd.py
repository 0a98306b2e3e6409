"""`dpaudit trace NAME|module:attr --rows n --dim d [--one-run] [--scorer ...]`: the tracing (fingerprinting) audit.

Exit status: 0 consistent (or no claim), 1 violation of the claim by an
assumption-free bound, 2 bad input. Output as `dpaudit canary`: a table or
JSON, the game's scores with --save, and a report (.html or .md) with the
score histograms and ROC curve with --report.
"""

from __future__ import annotations

import argparse

from dpaudit.attacks.games import DEFAULT_RUNS
from dpaudit.attacks.tracing.data import BIAS_KINDS, UNIFORM
from dpaudit.attacks.tracing.scores import KNOWN, SCORE_KINDS
from dpaudit.audit.cli.common import (
    GameFlags,
    add_execution_arguments,
    add_mechanism_arguments,
    add_membership_arguments,
    add_scorer,
    check_output_paths,
    emit,
    execution_of,
    game_and_bound,
    mechanism_of,
    parse_params,
    user_output_to_stderr,
)

GAME = GameFlags(runs=DEFAULT_RUNS, canaries=None, canaries_default="every distinct row")


def run(args: argparse.Namespace) -> int:
    """Run the tracing audit of the named mechanism; return the exit status."""
    from dpaudit.audit.audits.tracing import audit_tracing

    check_output_paths(args)
    params = parse_params(args.param)
    if ":" not in args.name:
        params.setdefault("num_rows", args.rows)
        params.setdefault("dim", args.dim)
    game, bound = game_and_bound(args, GAME, delta=args.at_delta)
    with user_output_to_stderr():
        result = audit_tracing(
            mechanism_of(args, params), game=game, bound=bound, rows=args.rows, dim=args.dim, scorer=args.scorer,
            reference_rows=args.reference_rows, biases=args.biases, fresh_data=args.fresh_data, group_size=args.group,
            seed=args.seed, execution=execution_of(args),
        )
    return emit(result, args)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `dpaudit trace`."""
    add_mechanism_arguments(parser, name_help="a built-in mechanism (e.g. marginals_gaussian) or module:attr")
    parser.add_argument("--rows", type=int, required=True, help="n, the rows of each dataset")
    parser.add_argument("--dim", type=int, required=True, help="d, the columns (statistics released)")
    add_membership_arguments(parser, GAME)
    add_scorer(parser, choices=SCORE_KINDS, default=KNOWN, score_alias=True,
               help="known biases, reference (biases estimated from --reference-rows), or tardos weights")
    parser.add_argument("--reference-rows", type=int, help="r, the population rows the 'reference' score estimates p from")
    parser.add_argument("--biases", choices=BIAS_KINDS, default=UNIFORM, help="column biases: uniform on [−1, 1] or tardos")
    parser.add_argument("--fresh-data", action="store_true", help="multi-run: draw all rows again in every run")
    parser.add_argument("--group", type=int, default=1, help="k: n/k distinct rows each copied k times (group privacy)")
    add_execution_arguments(parser)
    parser.set_defaults(run=run)
