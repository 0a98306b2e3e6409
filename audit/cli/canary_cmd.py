"""`dpaudit canary NAME|module:attr ...` or `dpaudit canary --scores FILE`: the multi-run membership audit.

Exit status: 0 consistent (or no claim), 1 violation of the claim by an
assumption-free bound, 2 bad input. The target arguments and the output are
shared with `dpaudit one-run`.
"""

from __future__ import annotations

import argparse
import json

from dpaudit.attacks.canary_scores import scorer_by_name
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.canaries import (
    CANARY_MODES,
    DEFAULT_DIM,
    MULTI_RUN,
    MULTI_RUN_ESTIMATORS,
    ONE_RUN_ESTIMATORS,
    CanaryAuditResult,
    audit_canaries,
    audit_observations,
)
from dpaudit.audit.cli.common import parse_params, resolve_mechanism
from dpaudit.audit.results.result import VIOLATION
from dpaudit.mechanisms.base import Claim, Mechanism
from dpaudit.mechanisms.errors import InvalidParameterError
from rich.console import Console


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the target (NAME or --scores), mechanism, canary, confidence, seed and output arguments."""
    parser.add_argument("name", metavar="NAME", nargs="?",
                        help="a built-in mechanism (see `dpaudit list`) or module:attr; omit with --scores")
    parser.add_argument("--scores", metavar="FILE",
                        help="audit saved observations (.json or .npz with 'scores' and 'truth') instead")
    parser.add_argument("--param", action="append", metavar="K=V", help="a mechanism parameter (repeatable)")
    parser.add_argument("--epsilon", type=float,
                        help="ε a built-in is calibrated to, or the claim to test (module:attr, --scores)")
    parser.add_argument("--delta", type=float, help="δ a built-in is calibrated to, or the claim's δ")
    parser.add_argument("--at-delta", type=float,
                        help="δ of the lower bound (default: the claim's δ; with --scores, --delta or 0)")
    parser.add_argument("--scorer", default=None,
                        help="inner-product (white-box) or black-box-sum/-norm/-max (default: fits the game)")
    parser.add_argument("--dim", type=int,
                        help=f"dimension of vector canaries (default {DEFAULT_DIM}; a user's mechanism: its records' width)")
    parser.add_argument("--norm", type=float, help="norm of vector canaries (default: the mechanism's clip, else 1)")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence of the lower bound (default 0.95)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print the JSON result")
    parser.add_argument("--save", metavar="FILE", help="also write the game's scores and truth (.json or .npz)")
    parser.add_argument("--report", metavar="FILE", help="write a report with score histograms and ROC (.html or .md)")


def add_estimator_arguments(parser: argparse._ActionsContainer) -> None:
    """Add --estimator (multi-run or one-run), --k-plus, --k-minus and --confidence, as the games share them."""
    parser.add_argument("--estimator", choices=MULTI_RUN_ESTIMATORS + ONE_RUN_ESTIMATORS,
                        help="threshold or gdp (multi-run; default threshold), one-run or one-run-fdp (default one-run)")
    parser.add_argument("--k-plus", type=int, help="one-run: guess IN for the k+ highest scores")
    parser.add_argument("--k-minus", type=int, help="one-run: guess OUT for the k− lowest scores")
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence of the lower bound (default 0.95)")


def check_report_argument(args: argparse.Namespace) -> None:
    """Raise before any work when --report names a file that is neither .html nor .md, or --save one that cannot be written."""
    if getattr(args, "save", None):
        Observations.check_path(args.save)
    if args.report:
        from dpaudit.audit.results.report import check_report_path  # matplotlib loads only when a report is asked for

        check_report_path(args.report)


def target(args: argparse.Namespace) -> Mechanism | Observations:
    """Return the mechanism named by NAME, or the observations in --scores (exactly one must be given)."""
    if (args.name is None) == (args.scores is None):
        raise InvalidParameterError("Give either a mechanism NAME or --scores FILE, not both and not neither.")
    if args.scores is not None:
        return Observations.load(args.scores)
    return resolve_mechanism(args.name, parse_params(args.param), args.epsilon, args.delta)


def bound_delta(args: argparse.Namespace, observations: bool) -> float | None:
    """Return the δ of the lower bound: --at-delta, else (for saved scores) --delta or 0, else the claim's (None)."""
    if args.at_delta is not None:
        return args.at_delta
    return (args.delta or 0.0) if observations else None


def scores_claim(args: argparse.Namespace) -> Claim | None:
    """Return the claim to test saved scores against (--epsilon, --delta), or None without --epsilon."""
    return None if args.epsilon is None else Claim(args.epsilon, args.delta or 0.0)


def emit(result: CanaryAuditResult, args: argparse.Namespace) -> int:
    """Print the result (JSON with --json), save its observations (--save) and report (--report).

    Returns 1 on an assumption-free violation, else 0.
    """
    if args.save and result.observations is not None:
        result.observations.save(args.save)
    if args.report:
        from dpaudit.audit.results.score_report import write_score_report

        write_score_report(result, args.report)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        Console().print(result.table())
    return 1 if result.verdict == VIOLATION else 0


def run(args: argparse.Namespace) -> int:
    """Run the multi-run canary audit on a mechanism or on saved scores."""
    check_report_argument(args)
    chosen = target(args)
    if isinstance(chosen, Observations):
        result = audit_observations(
            chosen, game=MULTI_RUN, estimator=args.estimator, delta=bound_delta(args, True),
            confidence=args.confidence, claim=scores_claim(args), seed=args.seed, label=args.scores,
        )
    else:
        result = audit_canaries(
            chosen, runs=args.runs, estimator=args.estimator, canary=args.canary,
            scorer=scorer_by_name(args.scorer) if args.scorer else None, dim=args.dim, norm=args.norm,
            confidence=args.confidence, delta=bound_delta(args, False), seed=args.seed,
        )
    return emit(result, args)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `canary` subcommand."""
    parser = subparsers.add_parser("canary", help="multi-run membership audit: R runs, each with or without a canary")
    add_target_arguments(parser)
    parser.add_argument("--runs", type=int, default=10_000, help="number of runs (default 10^4)")
    parser.add_argument("--estimator", choices=MULTI_RUN_ESTIMATORS, default="threshold",
                        help="threshold (dominating-pair test, assumption-free) or gdp (Gaussian trade-off assumption)")
    parser.add_argument("--canary", choices=CANARY_MODES, default="auto",
                        help="fixed, random (fresh each run), pair (the mechanism's neighbouring pair), auto")
    parser.set_defaults(run=run)
