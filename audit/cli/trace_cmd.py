"""`dpaudit trace NAME|module:attr --rows n --dim d [--one-run] [--score ...]`: the tracing (fingerprinting) audit.

Exit status: 0 consistent (or no claim), 1 violation of the claim by an
assumption-free bound, 2 bad input. Output as `dpaudit canary`: a table or
JSON, the game's scores with --save, and a report (.html or .md) with the
score histograms and ROC curve with --report.
"""

from __future__ import annotations

import argparse

from dpaudit.attacks.tracing.data import BIAS_KINDS, UNIFORM
from dpaudit.attacks.tracing.scores import KNOWN, SCORE_KINDS
from dpaudit.audit.audits.tracing import audit_tracing
from dpaudit.audit.cli.canary_cmd import add_estimator_arguments, check_report_argument, emit
from dpaudit.audit.cli.common import parse_params, resolve_mechanism


def run(args: argparse.Namespace) -> int:
    """Run the tracing audit of the named mechanism; return the exit status."""
    check_report_argument(args)
    params = parse_params(args.param)
    if ":" not in args.name:
        params.setdefault("num_rows", args.rows)
        params.setdefault("dim", args.dim)
    mech = resolve_mechanism(args.name, params, args.epsilon, args.delta)
    result = audit_tracing(
        mech, rows=args.rows, dim=args.dim, runs=args.runs, one_run=args.one_run, canaries=args.canaries,
        score=args.score, reference_rows=args.reference_rows, biases=args.biases, fresh_data=args.fresh_data,
        group_size=args.group, estimator=args.estimator, confidence=args.confidence, delta=args.at_delta,
        k_plus=args.k_plus, k_minus=args.k_minus, seed=args.seed,
    )
    return emit(result, args)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `trace` subcommand."""
    parser = subparsers.add_parser(
        "trace", help="tracing audit of a release of d statistics (one-way marginals): members vs fresh rows")
    parser.add_argument("name", metavar="NAME", help="a built-in mechanism (e.g. marginals_gaussian) or module:attr")
    parser.add_argument("--rows", type=int, required=True, help="n, the rows of each dataset")
    parser.add_argument("--dim", type=int, required=True, help="d, the columns (statistics released)")
    parser.add_argument("--param", action="append", metavar="K=V", help="a mechanism parameter (repeatable)")
    parser.add_argument("--epsilon", type=float, help="ε a built-in is calibrated to, or the claim to test (module:attr)")
    parser.add_argument("--delta", type=float, help="δ a built-in is calibrated to, or the claim's δ")
    parser.add_argument("--at-delta", type=float, help="δ of the lower bound (default: the claim's δ)")
    parser.add_argument("--one-run", action="store_true", help="one release with m slots, each a member with probability ½")
    parser.add_argument("--canaries", type=int, help="one-run: the number of slots m (default: every distinct row)")
    parser.add_argument("--runs", type=int, default=10_000, help="multi-run: the number of releases (default 10^4)")
    parser.add_argument("--score", choices=SCORE_KINDS, default=KNOWN,
                        help="known biases, reference (biases estimated from --reference-rows), or tardos weights")
    parser.add_argument("--reference-rows", type=int, help="r, the population rows the 'reference' score estimates p from")
    parser.add_argument("--biases", choices=BIAS_KINDS, default=UNIFORM, help="column biases: uniform on [−1, 1] or tardos")
    parser.add_argument("--fresh-data", action="store_true", help="multi-run: draw all rows again in every run")
    parser.add_argument("--group", type=int, default=1, help="k: n/k distinct rows each copied k times (group privacy)")
    add_estimator_arguments(parser)
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print the JSON result")
    parser.add_argument("--save", metavar="FILE", help="also write the game's scores and truth (.json or .npz)")
    parser.add_argument("--report", metavar="FILE", help="write a report with score histograms and ROC (.html or .md)")
    parser.set_defaults(run=run)
