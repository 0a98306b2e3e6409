"""`dpaudit list`: the built-in mechanisms with their default claims."""

from __future__ import annotations

import argparse
import json
import sys

from dpaudit.audit.cli.common import add_json

UNWRAPPED = 1000
"""Characters a line of the table may take when stdout is not a terminal (a pipe, a file): every column at its
full width, as a reader of the file or a `grep` wants it, where a terminal's width would cut them."""


def run(args: argparse.Namespace) -> int:
    """Print every registered mechanism (name, claim, relation, correct or buggy, description).

    A mechanism whose library environment is not built is listed without
    building it (its claim is the library's, asked in that environment):
    its row names the environment and the command that builds it.
    """
    from dpaudit.mechanisms.registry import get_mechanism, list_mechanisms, registration
    from rich.console import Console
    from rich.table import Table

    rows = []
    for name in list_mechanisms():
        entry = registration(name)
        if not entry.ready():
            rows.append(_unbuilt(name, entry.environment, entry.expected))
            continue
        mech = get_mechanism(name)
        rows.append({
            "name": name,
            "epsilon": mech.claim.epsilon,
            "delta": mech.claim.delta,
            "relation": mech.claim.relation.value,
            "buggy": None if (expected := registration(name).expected) is None else expected == "violation",
            "description": mech.description,
        })
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    table = Table(title="dpaudit mechanisms")
    for column in ("name", "claim (ε, δ)", "relation", "kind", "description"):
        table.add_column(column)
    for r in rows:
        kind = {True: "buggy", False: "correct", None: "?"}[r["buggy"]]
        claim = "(in its environment)" if r["epsilon"] is None else f"({r['epsilon']:g}, {r['delta']:g})"
        table.add_row(r["name"], claim, r["relation"] or "", kind, r["description"])
    Console(width=None if sys.stdout.isatty() else UNWRAPPED).print(table)
    return 0


def _unbuilt(name: str, environment: str, expected: str | None) -> dict:
    """Return the row of a mechanism whose library environment is not built: no claim until it is."""
    return {"name": name, "epsilon": None, "delta": None, "relation": None,
            "buggy": None if expected is None else expected == "violation",
            "description": f"needs the library environment {environment} (dpaudit env create {environment})",
            "environment": environment}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `dpaudit list`."""
    add_json(parser)
    parser.set_defaults(run=run)
