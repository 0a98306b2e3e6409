"""`dpaudit audit NAME|module:attr|--command CMD ...`: one audit; exit 0 consistent, 1 violation, 2 bad input, 3 crash."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import TYPE_CHECKING

from dpaudit.audit.cli import CRASH
from dpaudit.audit.cli.common import (
    LazyChoices,
    add_confidence,
    add_execution_arguments,
    add_external_arguments,
    add_mechanism_arguments,
    add_output_arguments,
    check_output_paths,
    emit,
    mechanism_of,
    progress_wanted,
    show,
    user_output_to_stderr,
)

if TYPE_CHECKING:
    from dpaudit.audit.audits.auto_trials import AutoBudget
    from dpaudit.execution.interrupted import Interrupted
    from dpaudit.execution.time_limit import Limit
    from dpaudit.mechanisms.base import Mechanism

INTERVALS = LazyChoices("dpaudit.audit.estimators.intervals", "INTERVALS")


def run(args: argparse.Namespace) -> int:
    """Run the audit and print its summary (or JSON); return 1 on a violation.

    What the mechanism prints while it runs goes to stderr, so stdout holds the result alone.
    """
    from dpaudit.audit.audits.two_dataset import audit_mechanism
    from dpaudit.errors import InvalidParameterError, MechanismError
    from dpaudit.execution.execution import Execution
    from dpaudit.execution.interrupted import Interrupted
    from dpaudit.execution.time_limit import Limit, TimeLimit, time_limit

    with user_output_to_stderr():
        mech = mechanism_of(args)
    check_output_paths(args)
    given = {"max_trials": args.max_trials, "max_seconds": args.max_seconds, "tight": args.tight}
    budget = _budget(args, mech, {key: value for key, value in given.items() if value is not None})
    execution = Execution(workers=args.workers, scheduler=args.scheduler, progress=progress_wanted(args))
    if args.hunt and args.search:
        raise InvalidParameterError("--search and --hunt are two pair searches: pass one of them.")
    limit = Limit(args.timeout)
    if args.timeout is not None:
        _load_audit_libraries()
    try:
        with time_limit(limit), user_output_to_stderr():
            result = audit_mechanism(
                mech, args.d0, args.d1, trials=args.trials, seed=args.seed, confidence=args.confidence,
                search="hunt" if args.hunt else args.search, interval=args.interval, budget=budget, execution=execution,
            )
    except Interrupted as stop:
        return _stopped_early(stop, limit, mech.name, args.json)
    except TimeLimit:
        raise MechanismError(
            f"Mechanism '{mech.name}' did not finish within the --timeout of {limit.seconds:g} seconds, "
            "before any held-out trial."
        ) from None
    return emit(result, args, event=mech.event if args.report else None)  # only the report reads it (dp_accounting)


def _budget(args: argparse.Namespace, mech: Mechanism, given: dict[str, float]) -> AutoBudget | None:
    """Return the budget of --trials auto or sequential (also when the default is sequential), None when there is none.

    Raises:
        InvalidParameterError: when budget flags come with a fixed number of trials, given or the default.
    """
    from dpaudit.audit.audits.auto_trials import AUTO, AutoBudget
    from dpaudit.audit.audits.default_trials import DEFAULT_TRIALS, default_trials
    from dpaudit.audit.audits.sequential_trials import SEQUENTIAL
    from dpaudit.audit.estimators.certify import Bound
    from dpaudit.audit.estimators.intervals import interval_named
    from dpaudit.errors import InvalidParameterError

    trials = args.trials
    if trials is None:
        trials = default_trials(mech, Bound(strategy=interval_named(args.interval)))[0]
    if trials not in (AUTO, SEQUENTIAL) and given:
        flags = ", ".join(f"--{key.replace('_', '-')}" for key in given)
        fixed = f"--trials {trials:,}" if args.trials is not None else f"default of {trials:,} trials for {mech.name}"
        raise InvalidParameterError(f"{flags} budget --trials auto or sequential; with a fixed {fixed} "
                                    "they would do nothing: pass --trials auto or sequential, or drop them.")
    if not given:
        return None
    return AutoBudget(**{"max_trials": DEFAULT_TRIALS, **given} if args.trials is None else given)


def _load_audit_libraries() -> None:
    """Import what the two-dataset audit loads on first use, so that --timeout times the mechanism, not dpaudit's imports."""
    for name in ("scipy.stats", "scipy.special", "scipy.optimize", "statsmodels.stats.proportion",
                 "dp_accounting.pld.privacy_loss_distribution"):
        importlib.import_module(name)


def _stopped_early(stop: Interrupted, limit: Limit, name: str, as_json: bool) -> int:
    """Print the bound of the held-out trials that finished before Ctrl-C or the --timeout; return the exit status.

    Ctrl-C: 130. Time limit: 1 if those trials certify a violation, else 3 (the mechanism hung).
    """
    from dpaudit.audit.results.result import VIOLATION
    from dpaudit.errors import MechanismError

    if stop.partial is None and limit.expired:
        raise MechanismError(f"Mechanism '{name}' did not finish within the --timeout of {limit.seconds:g} seconds.")
    if stop.partial is None:
        raise stop
    held = stop.partial.phases.held_out
    why = f"stopped by the --timeout of {limit.seconds:g} seconds" if limit.expired else "interrupted"
    print(f"dpaudit: {why}; the bound below uses the {held:,} held-out trials per dataset that finished.", file=sys.stderr)
    show(stop.partial, as_json)
    if not limit.expired:
        return 130
    return 1 if stop.partial.verdict == VIOLATION else CRASH


def _trials_argument(text: str) -> int | str:
    """Return `text` as a trial count (integers written as 1000000, 1e6 or 1_000_000), "auto" or "sequential"."""
    from dpaudit.audit.audits.auto_trials import AUTO
    from dpaudit.audit.audits.sequential_trials import SEQUENTIAL

    if text.strip().lower() in (AUTO, SEQUENTIAL):
        return text.strip().lower()
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is neither a number of trials nor 'auto' or 'sequential'") from None
    if not value.is_integer():
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of trials")
    return int(value)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `dpaudit audit`."""
    add_mechanism_arguments(parser, optional=True,
                            name_help="a built-in mechanism (see `dpaudit list`) or module:attr; omit with --command")
    add_external_arguments(parser)
    parser.add_argument("--trials", type=_trials_argument,
                        help="outputs drawn per dataset (default 10^6; 1e6 is fine), 'auto': rounds of growing size"
                             " until a violation is certified or the budget is spent, or 'sequential': an anytime-valid"
                             " bound looked at after every chunk, stopping at a certified violation, when the claim is"
                             " out of reach, or at the budget. Left out: sequential with a budget of 10^6 for a"
                             " mechanism whose draws are expensive (--command, --python, a library adapter), else 10^6")
    parser.add_argument("--max-trials", type=_trials_argument,
                        help="with --trials auto or sequential: trials per dataset in all (default 2e7; 1e6 for the"
                             " sequential default of an expensive mechanism)")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help="stop a mechanism that hangs after SECONDS; the trials that finished give the bound")
    parser.add_argument("--max-seconds", type=float, help="with --trials auto: no round starts that would end later;"
                        " sequential: stop after the first look past SECONDS")
    parser.add_argument("--tight", type=float,
                        help="with --trials auto or sequential: also stop once the bound reaches this fraction of the claimed ε"
                             " (default 1)")
    add_confidence(parser)
    add_output_arguments(parser, save=False, report="privacy-region plot")
    add_execution_arguments(parser)
    parser.add_argument("--search", action="store_true",
                        help="search the neighbouring pair among StatDP's patterns (extra trials, separate seed stream)")
    parser.add_argument("--hunt", action="store_true",
                        help="search the pair among the neighbours a bug hunter would try, generated from the declared"
                             " records: bounds, NaN/inf, huge and tiny numbers, unseen categories, empty datasets,"
                             " float rounding (extra trials, separate seed stream)")
    parser.add_argument("--interval", choices=INTERVALS, metavar="KIND", default="two-rates",
                        help="two-rates (default, conservative), ratio (pure ε only: one exact interval on the ratio"
                             " of Poisson counts, about a third of the samples for the same bound) or bands (scalar"
                             " outputs: no selection split, the threshold chosen after all outputs are counted)")
    parser.set_defaults(run=run)
