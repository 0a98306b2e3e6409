"""The `dpaudit` command: a thin layer over the functions a Python user calls.

Each subcommand lives in its own module exposing `register(subparsers)`, which
adds a parser whose `run(args) -> int` default returns the exit status.
Exit statuses: 0 consistent, 1 violation (only when one was certified), 2 bad
input (`InvalidParameterError`, `UnknownMechanismError`, unreadable files),
3 a crash of the mechanism (`MechanismError`) or any other error. Each is one
sentence on stderr; `--debug` adds the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from typing import Sequence

from dpaudit.mechanisms.errors import DPAuditError, MechanismError

BAD_INPUT, CRASH = 2, 3

__all__ = ["build_parser", "main"]

COMMAND_MODULES = (
    "dpaudit.audit.cli.list_cmd",
    "dpaudit.audit.cli.audit_cmd",
    "dpaudit.audit.cli.suite_cmd",
    "dpaudit.audit.cli.bounds_cmd",
    "dpaudit.audit.cli.canary_cmd",
    "dpaudit.audit.cli.one_run_cmd",
    "dpaudit.audit.cli.trace_cmd",
    "dpaudit.audit.cli.dpsgd_cmd",
    "dpaudit.audit.cli.experiment_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="dpaudit",
        description="Empirical privacy auditing: certified ε lower bounds beside theory upper bounds.",
    )
    parser.add_argument("--debug", action="store_true", help="print the traceback of an error (anywhere on the line)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status (0 consistent, 1 violation, 2 bad input, 3 crash or internal error).

    `--debug` may stand anywhere among the arguments.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in args
    parsed = build_parser().parse_args([a for a in args if a != "--debug"])  # argparse exits 2 on bad arguments
    try:
        return int(parsed.run(parsed))
    except KeyboardInterrupt:
        print("dpaudit: interrupted.", file=sys.stderr)
        return 130
    except BaseException as exc:  # every other failure, sys.exit() in user code included, is one sentence
        status, sentence = explain(exc)
        if debug:
            traceback.print_exc()
        print(f"dpaudit: error: {sentence}", file=sys.stderr)
        return status


def explain(exc: BaseException) -> tuple[int, str]:
    """Return the exit status and the sentence for an error that ended a command."""
    if isinstance(exc, MechanismError):
        return CRASH, str(exc)
    if isinstance(exc, DPAuditError):
        return BAD_INPUT, str(exc)
    if isinstance(exc, OSError):
        return BAD_INPUT, f"cannot write or read {exc.filename or 'a file'}: {exc.strerror or exc}."
    if isinstance(exc, MemoryError):
        return CRASH, "out of memory; try fewer trials, or a mechanism with smaller outputs."
    detail = str(exc).strip().rstrip(".") or "no message"
    return CRASH, f"internal error, {type(exc).__name__}: {detail} (rerun with --debug for the traceback)."


if __name__ == "__main__":
    sys.exit(main())
