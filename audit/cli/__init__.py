"""The `dpaudit` command: a thin layer over the functions a Python user calls.

Each subcommand lives in its own module exposing `register(subparsers)`, which
adds a parser whose `run(args) -> int` default returns the exit status.
Errors deriving from `DPAuditError` print one sentence on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from dpaudit.mechanisms.errors import DPAuditError

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
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status (2 for bad input)."""
    try:
        args = build_parser().parse_args(argv)
        return int(args.run(args))
    except DPAuditError as exc:
        print(f"dpaudit: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"dpaudit: error: cannot write or read {exc.filename or 'a file'}: {exc.strerror or exc}.", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dpaudit: interrupted.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
