"""`dpaudit suite`: audit every built-in mechanism; exit 1 if a verdict is not the expected one."""

from __future__ import annotations

import argparse
import contextlib
import json
import pathlib
import sys
from typing import TYPE_CHECKING, Any

from dpaudit.audit.cli.common import add_confidence, add_json, add_output_folder, add_quiet, add_seed, check_output_paths

if TYPE_CHECKING:
    from dpaudit.audit.audits.suite import SuiteRow


def run(args: argparse.Namespace) -> int:
    """Run the suite, print the table (or JSON), write files with --out; 1 when a verdict is unexpected.

    A status line names the mechanism being audited (on stderr with --json), unless --quiet.
    On Ctrl-C the rows finished so far are printed (and written) all the same, and the status is 130.
    """
    from dpaudit.audit.audits.suite import COLUMNS, cells, run_suite, select
    from dpaudit.errors import InvalidParameterError
    from rich.console import Console
    from rich.table import Table

    check_output_paths(args)
    entries = select("full" if args.full else "quick", args.only)
    if not entries:
        raise InvalidParameterError(f"No mechanism matches --only {args.only!r}; run `dpaudit list`.")
    stream = sys.stderr if args.json else sys.stdout
    console = Console(file=stream, width=None if stream.isatty() else 150)
    table = Table(title=f"dpaudit suite ({'full' if args.full else 'quick'}, seed {args.seed})")
    for column in COLUMNS:
        table.add_column(column, justify="right" if column not in ("mechanism", "relation", "verdict") else "left")
    status = None if args.quiet else console.status("auditing...")
    rows: list[SuiteRow] = []

    def on_row(row: SuiteRow) -> None:
        if status is not None:
            status.update(f"audited {row.result.mechanism}")
        rows.append(row)
        table.add_row(*cells(row))

    try:
        with status if status is not None else contextlib.nullcontext():
            run_suite(entries, seed=args.seed, confidence=args.confidence, on_row=on_row)
    except KeyboardInterrupt:
        _report(rows, table, console, args)
        print(f"dpaudit: interrupted after {len(rows)} of {len(entries)} mechanisms; the rows above are those finished.",
              file=sys.stderr)
        return 130
    return _report(rows, table, console, args)


def _report(rows: list[SuiteRow], table: Any, console: Any, args: argparse.Namespace) -> int:
    """Print the rows (a table, or JSON with --json), write them with --out; return 1 when a verdict is unexpected."""
    from dpaudit.audit.audits.suite import write

    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2))
    else:
        console.print(table)
    if args.out:
        write(rows, pathlib.Path(args.out))
    bad = [r.result.mechanism for r in rows if not r.as_expected]
    if bad:
        console.print(f"[red]Unexpected verdicts: {', '.join(bad)}[/red]")
    return 1 if bad else 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `dpaudit suite`."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="10^6 trials per dataset (default)")
    mode.add_argument("--full", action="store_true", help="10^7 trials per dataset")
    parser.add_argument("--only", metavar="PATTERN", help="only mechanisms whose name matches this glob")
    add_output_folder(parser, "write suite.md and suite.json into DIR")
    add_seed(parser)
    add_confidence(parser)
    add_json(parser)
    add_quiet(parser)
    parser.set_defaults(run=run)
