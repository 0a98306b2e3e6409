"""`dpaudit one-run NAME|module:attr ...` or `dpaudit one-run --scores FILE`: exactly `dpaudit canary --one-run`.

m canaries, each included independently with probability 1/2, one run
(Steinke, Nasr, Jagielski, NeurIPS 2023). Exit status: 0 consistent (or no
claim), 1 violation by an assumption-free bound, 2 bad input.
"""

from __future__ import annotations

import argparse

from dpaudit.audit.cli.canary_cmd import add_canary_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `dpaudit one-run`: those of `dpaudit canary`, with the one-run game by default."""
    add_canary_arguments(parser, one_run=True)
