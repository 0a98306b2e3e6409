"""The `dpaudit` command: a thin layer over the functions a Python user calls.

Each subcommand is a row of `COMMANDS` (name → module, help line); its
module exposes `add_arguments(parser)`, which adds its arguments and sets
`run(args) -> int`, the exit status, as the parser's default. `main` adds
the arguments of the one subcommand on the line only, so `dpaudit --help`
and every command load no more than they use. Flags shared by several
subcommands are defined once, in `common`.
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
from typing import Collection, Sequence

BAD_INPUT, CRASH = 2, 3

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: dict[str, tuple[str, str]] = {
    "list": ("list_cmd", "list the built-in mechanisms"),
    "audit": ("audit_cmd", "audit one mechanism on its worst-case neighbouring pair"),
    "suite": ("suite_cmd", "audit every built-in mechanism and check the verdicts"),
    "bounds": ("bounds_cmd", "theory upper bounds side by side (composition, amplification, ...)"),
    "canary": ("canary_cmd", "membership audit with canaries: R runs each with or without a canary, or --one-run"),
    "one-run": ("one_run_cmd", "one-run audit: m canaries each in with probability 1/2, one run (= canary --one-run)"),
    "trace": ("trace_cmd", "tracing audit of a release of d statistics (one-way marginals): members vs fresh rows"),
    "replay": ("replay_cmd", "replay the draws of a mechanism on neighbours, then certify what moved on fresh draws"),
    "dpsgd": ("dpsgd_cmd", "audit DP-SGD training with canaries (dpaudit's trainer, Opacus, or yours)"),
    "experiment": ("experiment_cmd", "reproduce a published result (figure + JSON)"),
    "env": ("env_cmd", "library environments: list them, create or remove one (a library version in a venv of its own)"),
}
"""Subcommand → (its module in dpaudit.audit.cli, its help line)."""


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """Return the argument parser: every subcommand, with the arguments of those in `commands` (None: all).

    The others are listed with their help line only.
    """
    parser = argparse.ArgumentParser(
        prog="dpaudit",
        description="Empirical privacy auditing: certified ε lower bounds beside theory upper bounds.",
    )
    parser.add_argument("--debug", action="store_true", help="print the traceback of an error (anywhere on the line)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        if commands is not None and name not in commands:
            subparsers.add_parser(name, help=help_text, description=help_text)
            continue
        from dpaudit.audit.cli.common import HelpFormatter

        sub = subparsers.add_parser(name, help=help_text, description=help_text, formatter_class=HelpFormatter)
        importlib.import_module(f"{__name__}.{module}").add_arguments(sub)
    return parser


def _command(args: Sequence[str]) -> str | None:
    """Return the subcommand on the line (the first word not an option), or None."""
    word = next((a for a in args if not a.startswith("-")), None)
    return word if word in COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit status (0 consistent, 1 violation, 2 bad input, 3 crash or internal error).

    `--debug` may stand anywhere among the arguments.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    command = _command(args)
    parsed = build_parser([command] if command else []).parse_args(args)  # argparse exits 2 on bad arguments
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
    from dpaudit.errors import DPAuditError, MechanismError

    if isinstance(exc, MechanismError):
        return CRASH, str(exc)
    if isinstance(exc, DPAuditError):
        from dpaudit.audit.cli.common import in_cli_words

        return BAD_INPUT, in_cli_words(str(exc))
    if isinstance(exc, OSError):
        return BAD_INPUT, f"cannot write or read {exc.filename or 'a file'}: {exc.strerror or exc}."
    if isinstance(exc, MemoryError):
        return CRASH, "out of memory; try fewer trials, or a mechanism with smaller outputs."
    detail = str(exc).strip().rstrip(".") or "no message"
    return CRASH, f"internal error, {type(exc).__name__}: {detail} (rerun with --debug for the traceback)."


if __name__ == "__main__":
    sys.exit(main())
