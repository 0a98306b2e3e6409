"""`dpaudit env list|create|remove [NAME]`: the library environments, each a library version in a virtual environment of its own."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from dpaudit.audit.cli.common import add_json


def _declared() -> dict[str, Any]:
    """Return every declared environment by name, after importing every module that declares one (the adapters)."""
    from dpaudit.mechanisms.environments import ENVIRONMENTS
    from dpaudit.mechanisms.registry import list_mechanisms

    list_mechanisms()  # imports the built-in and adapter modules, which declare their environments
    return ENVIRONMENTS


def _row(name: str) -> dict[str, Any]:
    """Return what `env list` shows of the environment `name`: its declaration, whether it is built, its folder."""
    import dataclasses

    from dpaudit.mechanisms.environments import ENVIRONMENTS, environment_dir, environment_exists

    return {**dataclasses.asdict(ENVIRONMENTS[name]), "built": environment_exists(name), "path": str(environment_dir(name))}


def _list(args: argparse.Namespace) -> int:
    """Print every declared environment (name, packages, python, built or not, path); return 0."""
    from rich.console import Console
    from rich.table import Table

    rows = [_row(name) for name in sorted(_declared())]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    table = Table(title="dpaudit library environments")
    for column in ("name", "packages", "python", "built", "path"):
        table.add_column(column, overflow="fold")
    for r in rows:
        needs = f"\n(needs {', '.join(r['needs'])})" if r["needs"] else ""
        table.add_row(r["name"], " ".join(r["packages"]) + needs, r["python"], "yes" if r["built"] else "no", r["path"])
    Console().print(table)
    return 0


def _create(args: argparse.Namespace) -> int:
    """Build the environment NAME unless it is built; print its interpreter; return 0 (a failed build raises, exit 2)."""
    from dpaudit.mechanisms.environments import environment_dir, environment_exists, environment_python, uv_executable

    _declared()
    if environment_exists(args.name):
        print(f"{args.name} is built already: {environment_python(args.name, create=False)}")
        return 0
    installer = "uv" if uv_executable() else "venv and pip (uv is not installed)"
    print(f"dpaudit: building {args.name} into {environment_dir(args.name)} with {installer}...", file=sys.stderr)
    start = time.monotonic()
    python = environment_python(args.name)
    print(f"{args.name} is built ({time.monotonic() - start:.0f} s): {python}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    """Remove every build of the environment NAME; return 0 (also when none was built)."""
    from dpaudit.mechanisms.environments import remove_environment

    _declared()
    print(f"{args.name} is removed." if remove_environment(args.name) else f"{args.name} was not built; nothing to remove.")
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the action on the line (list, create or remove); return its exit status."""
    return {"list": _list, "create": _create, "remove": _remove}[args.action](args)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `dpaudit env`: its three actions, each a subcommand."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="every declared environment: name, packages, python, built or not, path")
    add_json(listing)
    create = actions.add_parser("create", help="build an environment now (adapters build theirs on first use)")
    create.add_argument("name", metavar="NAME", help="a declared environment (see `dpaudit env list`)")
    remove = actions.add_parser("remove", help="delete an environment's folder (every build of it)")
    remove.add_argument("name", metavar="NAME", help="a declared environment (see `dpaudit env list`)")
    parser.set_defaults(run=run)
