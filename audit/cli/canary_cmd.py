"""`dpaudit canary NAME|module:attr ...` or `dpaudit canary --scores FILE`: the membership audit with canaries.

The multi-run game by default (`--runs R`: R runs, each with or without a
canary); `--one-run` plays the one-run game (`--canaries m`, each in with
probability 1/2, one run), which `dpaudit one-run` names on its own. Exit
status: 0 consistent (or no claim), 1 violation of the claim by an
assumption-free bound, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from dpaudit.attacks.games import DEFAULT_CANARIES, DEFAULT_RUNS
from dpaudit.audit.cli.common import (
    GameFlags,
    LazyChoices,
    add_execution_arguments,
    add_mechanism_arguments,
    add_membership_arguments,
    add_scorer,
    check_output_paths,
    emit,
    execution_of,
    game_and_bound,
    mechanism_of,
    show,
    user_output_to_stderr,
)

if TYPE_CHECKING:
    from dpaudit.execution.interrupted import Interrupted

GAME = GameFlags(runs=DEFAULT_RUNS, canaries=DEFAULT_CANARIES)
CANARY_MODES = LazyChoices("dpaudit.attacks.canary_design", "CANARY_MODES")


def _bound_delta(args: argparse.Namespace, scores: bool) -> float | None:
    """Return the δ of the lower bound: --at-delta, else (for saved scores) --delta or 0, else the claim's (None)."""
    if args.at_delta is not None:
        return args.at_delta
    return (args.delta or 0.0) if scores else None


def run(args: argparse.Namespace) -> int:
    """Run the membership audit (the game the flags choose) on a mechanism or on saved scores."""
    from dpaudit.errors import InvalidParameterError

    check_output_paths(args)
    if (args.name is None) == (args.scores is None):
        raise InvalidParameterError("Give either a mechanism NAME or --scores FILE, not both and not neither.")
    if args.scores is not None:
        from dpaudit.attacks.observations import Observations
        from dpaudit.audit.audits.canaries import audit_scores
        from dpaudit.mechanisms.base import Claim

        observations = Observations.load(args.scores)
        game, bound = game_and_bound(args, None, delta=_bound_delta(args, True))
        claim = None if args.epsilon is None else Claim(args.epsilon, args.delta or 0.0)
        if args.workers is not None or args.scheduler is not None:
            raise InvalidParameterError("--scores certifies saved scores here, with nothing to run; drop --workers and --scheduler.")
        result = audit_scores(observations, game=game, bound=bound, claim=claim, seed=args.seed, label=args.scores)
    else:
        from dpaudit.audit.audits.canaries import audit_canaries
        from dpaudit.execution.interrupted import Interrupted

        game, bound = game_and_bound(args, GAME, delta=_bound_delta(args, False))
        try:
            with user_output_to_stderr():
                result = audit_canaries(
                    mechanism_of(args), game=game, bound=bound, canary=args.canary,
                    scorer=args.scorer, dim=args.dim, norm=args.norm, seed=args.seed, execution=execution_of(args),
                )
        except Interrupted as stop:
            return _interrupted(stop, args.json)
    return emit(result, args)


def _interrupted(stop: Interrupted, as_json: bool) -> int:
    """Print the bound of the runs judged before Ctrl-C (a sequential game's, valid at any stopping time); return 130."""
    if stop.partial is None:
        raise stop
    print(f"dpaudit: interrupted; the bound below uses the {stop.done:,} runs played.", file=sys.stderr)
    show(stop.partial, as_json)
    return 130


def add_canary_arguments(parser: argparse.ArgumentParser, *, one_run: bool) -> None:
    """Add the arguments of the canary audit; `one_run`: the one-run game by default (`dpaudit one-run`)."""
    add_mechanism_arguments(parser, optional=True,
                            name_help="a built-in mechanism (see `dpaudit list`) or module:attr; omit with --scores")
    parser.add_argument("--scores", metavar="FILE",
                        help="audit saved observations (.json or .npz with 'scores' and 'truth') instead; "
                             "--epsilon and --delta are then the claim")
    add_membership_arguments(parser, GAME)
    parser.add_argument("--canary", choices=CANARY_MODES, default="auto", metavar="MODE",
                        help="multi-run: fixed, random (fresh each run), pair (the mechanism's neighbouring pair), "
                             "or auto (default: fixed when dpaudit can make canaries for the mechanism, else pair)")
    add_scorer(parser, help="inner-product (white-box) or black-box-sum/-norm/-max (default: fits the game)")
    parser.add_argument("--dim", type=int,
                        help="dimension of vector canaries (default 1000; a user's mechanism: its records' width)")
    parser.add_argument("--norm", type=float, help="norm of vector canaries (default: the mechanism's clip, else 1)")
    add_execution_arguments(parser)
    parser.set_defaults(run=run, one_run=one_run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `dpaudit canary` (the multi-run game unless --one-run)."""
    add_canary_arguments(parser, one_run=False)
