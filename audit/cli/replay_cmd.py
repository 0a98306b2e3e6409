"""`dpaudit replay NAME|module:attr ...`: replay the mechanism's draws on neighbours, certify the findings on fresh draws.

Exit 0 consistent, 1 violation (certified), 2 bad input (and noise drawn outside the rng: not replayable), 3 crash.
"""

from __future__ import annotations

import argparse

from dpaudit.audit.cli.common import (
    add_confidence,
    add_execution_arguments,
    add_mechanism_arguments,
    add_output_arguments,
    dataset_of,
    emit,
    execution_of,
    mechanism_of,
    user_output_to_stderr,
)

KINDS = ("bounds", "non-finite", "magnitude", "new-category", "small", "rounding", "filled")
"""The kinds of generated neighbours (`dpaudit.attacks.neighbour_candidates.KINDS`), spelled here so --help loads nothing."""


def run(args: argparse.Namespace) -> int:
    """Run `audit_replay` and print its summary (or JSON); return 1 on a certified violation."""
    from dpaudit.audit.audits.replay import audit_replay

    with user_output_to_stderr():
        mech = mechanism_of(args)
        result = audit_replay(mech, args.d0, args.d1, trials=args.trials, seed=args.seed, confidence=args.confidence,
                              search=args.search, kinds=args.kinds, certify=args.certify, execution=execution_of(args))
    return emit(result, args)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `dpaudit replay`."""
    add_mechanism_arguments(parser, name_help="a built-in mechanism (see `dpaudit list`) or module:attr whose noise "
                                              "comes from the rng it is given")
    parser.add_argument("--d0", type=dataset_of, metavar="JSON", help="the first dataset, e.g. '[0, 0, 0]'")
    parser.add_argument("--d1", type=dataset_of, metavar="JSON", help="its neighbour, e.g. '[0, 0, 1]'")
    parser.add_argument("--trials", type=int, default=20_000,
                        help="fresh outputs per dataset of each certificate (default 20000)")
    parser.add_argument("--certify", type=int, default=3, metavar="K",
                        help="certify at most K flagged pairs, each at β/K (default 3)")
    parser.add_argument("--search", action="store_true",
                        help="replay the default pair and the neighbours a bug hunter would try (two runs each)")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, metavar="KIND",
                        help=f"with --search: the kinds of neighbours ({', '.join(KINDS)}; default all)")
    add_confidence(parser)
    add_output_arguments(parser, save=False, report=None)
    add_execution_arguments(parser)
    parser.set_defaults(run=run, report=None)
