"""`dpaudit one-run NAME|module:attr ...` or `dpaudit one-run --scores FILE`: the one-run audit.

m canaries, each included independently with probability 1/2, one run
(Steinke, Nasr, Jagielski, NeurIPS 2023). Exit status: 0 consistent (or no
claim), 1 violation by an assumption-free bound, 2 bad input.
"""

from __future__ import annotations

import argparse

from dpaudit.attacks.canary_scores import scorer_by_name
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.canaries import ONE_RUN, ONE_RUN_ESTIMATORS, audit_observations, audit_one_run
from dpaudit.audit.cli.canary_cmd import (
    add_target_arguments,
    bound_delta,
    check_report_argument,
    emit,
    scores_claim,
    target,
)


def run(args: argparse.Namespace) -> int:
    """Run the one-run audit on a mechanism or on saved scores."""
    check_report_argument(args)
    chosen = target(args)
    if isinstance(chosen, Observations):
        result = audit_observations(
            chosen, game=ONE_RUN, estimator=args.estimator, delta=bound_delta(args, True),
            confidence=args.confidence, k_plus=args.k_plus, k_minus=args.k_minus,
            claim=scores_claim(args), seed=args.seed, label=args.scores,
        )
    else:
        result = audit_one_run(
            chosen, canaries=args.canaries, k_plus=args.k_plus, k_minus=args.k_minus,
            estimator=args.estimator, scorer=scorer_by_name(args.scorer) if args.scorer else None,
            dim=args.dim, norm=args.norm, confidence=args.confidence, delta=bound_delta(args, False),
            seed=args.seed,
        )
    return emit(result, args)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `one-run` subcommand."""
    parser = subparsers.add_parser("one-run", help="one-run audit: m canaries each in with probability 1/2, one run")
    add_target_arguments(parser)
    parser.add_argument("--canaries", type=int, default=1000, help="number of canaries m (default 1000)")
    parser.add_argument("--k-plus", type=int, help="guess IN for the k+ highest scores (fixed in advance)")
    parser.add_argument("--k-minus", type=int, help="guess OUT for the k− lowest scores (fixed in advance)")
    parser.add_argument("--estimator", choices=ONE_RUN_ESTIMATORS, default="one-run",
                        help="one-run (assumption-free) or one-run-fdp (Gaussian trade-off assumption)")
    parser.set_defaults(run=run)
