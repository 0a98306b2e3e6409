"""`dpaudit dpsgd ...`: audit DP-SGD training (dpaudit's trainer, a buggy variant, Opacus, or yours) with canaries.

Exit status: 0 consistent, 1 violation of the claim by an assumption-free
bound, 2 bad input, 130 on Ctrl-C (finished runs stay in the --store
folder; rerun with --resume). Output as `dpaudit canary`: a table or JSON,
--save, --report.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dpaudit.attacks.dpsgd.canaries import AUTO, CANARY_CHOICES, DIRAC_TARGETS, QUIET
from dpaudit.attacks.dpsgd.game import DPAUDIT, TARGETS
from dpaudit.attacks.dpsgd.scores import BLACK_BOX_SCORES, LOSS, THREATS, WHITE_BOX
from dpaudit.attacks.games import TRAINING_CANARIES, TRAINING_RUNS
from dpaudit.audit.cli.common import (
    GameFlags,
    add_bound_arguments,
    add_claim_delta,
    add_execution_arguments,
    add_game_arguments,
    add_output_arguments,
    add_scorer,
    check_output_paths,
    emit,
    game_and_bound,
    load_attribute,
    progress_wanted,
    show,
    user_output_to_stderr,
)
from dpaudit.mechanisms.dpsgd.config import BATCHINGS, BUGS, DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import DATASETS
from dpaudit.mechanisms.dpsgd.models import MODELS

DEFAULTS = DPSGDConfig()
GAME = GameFlags(runs=TRAINING_RUNS, canaries=TRAINING_CANARIES,
                 runs_default=f"sequential, at most {TRAINING_RUNS}; with --save, {TRAINING_RUNS} fixed, whose scores it writes")


def run(args: argparse.Namespace) -> int:
    """Run the DP-SGD audit; return the exit status."""
    check_output_paths(args)
    game, bound = game_and_bound(args, GAME, delta=args.at_delta)
    asked = args.one_run or args.runs is not None or args.max_runs is not None or args.save  # else audit_dpsgd's default
    from dpaudit.audit.audits.dpsgd import audit_dpsgd  # torch: only once the flags are checked
    from dpaudit.execution.execution import Execution
    from dpaudit.execution.interrupted import Interrupted

    with user_output_to_stderr():
        target = _target(args.target)
    user = not isinstance(target, str)
    data = DEFAULTS.data if user or args.data is None else args.data
    config = DPSGDConfig(
        model=args.model, data=data, noise_multiplier=args.noise_multiplier, clip_norm=args.clip_norm,
        sample_rate=args.sample_rate, steps=args.steps, learning_rate=args.learning_rate, batching=args.batching,
        delta=args.delta, bug=args.bug,
    )
    execution = Execution(store=args.store, resume=args.resume, workers=args.workers, scheduler=args.scheduler,
                          progress=progress_wanted(args))
    try:
        with user_output_to_stderr():
            result = audit_dpsgd(
                config, target=target, game=game if asked else None, bound=bound, canary=args.canary, dirac_target=args.dirac_target,
                threat=args.threat, scorer=args.scorer, execution=execution, seed=args.seed,
                **({"dataset": _dataset(args.data)} if user else {}),
            )
    except Interrupted as stop:
        where = f"; they are saved in {stop.store}, rerun with --resume" if stop.store else " (pass --store to keep runs)"
        print(f"dpaudit: interrupted after {stop.done} of {stop.total} training runs{where}.", file=sys.stderr)
        if stop.partial is not None:  # a sequential game's bound, valid at any stopping time
            show(stop.partial, args.json)
        return 130
    return emit(result, args)


def _dataset(value: str | None) -> str | int:
    """Return what a user's trainer trains on: "auto" (the default), "user", "canaries", "adversarial",
    "batch-adversarial", or a number of its rows."""
    if value is None:
        return "auto"
    return int(value) if value.isdigit() else value


def _target(name: str) -> Any:
    """Return "dpaudit", "opacus", or the `UserTrainer` that `module:attr` names."""
    if ":" not in name:
        return name
    from dpaudit.errors import UnknownMechanismError
    from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

    found = load_attribute(name)
    if not isinstance(found, UserTrainer):
        raise UnknownMechanismError(f"'{name}' is not a UserTrainer (wrap your training function with "
                                    "dpaudit.mechanisms.dpsgd.user_trainer.UserTrainer).")
    return found


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of `dpaudit dpsgd`."""
    training = parser.add_argument_group("training")
    training.add_argument("--target", default=DPAUDIT, metavar="{" + ",".join(TARGETS) + ",module:attr}",
                          help="dpaudit's trainer, Opacus, or module:attr naming a UserTrainer (default dpaudit)")
    training.add_argument("--bug", choices=BUGS, help="train a known-buggy variant of dpaudit's trainer")
    training.add_argument("--model", choices=MODELS, default=DEFAULTS.model, help="logreg or mlp (default logreg)")
    training.add_argument("--data", metavar="DATA",
                          help=f"{' or '.join(DATASETS)} for dpaudit's trainer and Opacus (default {DEFAULTS.data}); for your "
                               "own trainer (module:attr): auto (the default: the canaries alone, a few rows, adversarial rows and "
                               "your data screened, the best audited), user (your data), canaries (the canaries alone), "
                               "adversarial (rows against the canaries), batch-adversarial (units against one canary, so "
                               "that every batch opposes it) or N (N of your rows)")
    training.add_argument("--noise-multiplier", type=float, default=DEFAULTS.noise_multiplier, help="σ (default 1)")
    training.add_argument("--clip-norm", type=float, default=DEFAULTS.clip_norm, help="C (default 1)")
    training.add_argument("--sample-rate", type=float, default=DEFAULTS.sample_rate, help="q (default 256/1797)")
    training.add_argument("--steps", type=int, default=DEFAULTS.steps, help="T (default 100)")
    training.add_argument("--learning-rate", type=float, default=DEFAULTS.learning_rate, help="lr (default 2)")
    training.add_argument("--batching", choices=BATCHINGS, default=DEFAULTS.batching,
                          help="poisson sampling or shuffled fixed-size batches (default poisson)")
    add_claim_delta(training, default=DEFAULTS.delta, help="δ of the claim (default 1e-5)")
    attack = parser.add_argument_group("attack")
    attack.add_argument("--canary", choices=CANARY_CHOICES, default=AUTO,
                        help="auto (the default: dirac where gradient canaries enter the runs: dpaudit's trainer, your "
                             "Opacus loop with the hook; else crafted: --target opacus, a loop without the hook), "
                             "dirac, crafted or mislabelled")
    attack.add_argument("--dirac-target", choices=DIRAC_TARGETS, default=QUIET,
                        help="coordinates of Dirac canaries: the quietest at θ₀, or biases (default quiet)")
    attack.add_argument("--threat", choices=THREATS, default=WHITE_BOX,
                        help="white-box (every iterate) or black-box (final model) (default white-box)")
    add_scorer(attack, choices=BLACK_BOX_SCORES, default=LOSS, score_alias=True,
               help="black-box score of input canaries: loss or loss-difference (default loss)")
    add_game_arguments(attack, GAME)
    add_bound_arguments(attack)
    runs = parser.add_argument_group("execution and output")
    add_execution_arguments(runs)
    runs.add_argument("--store", metavar="DIR",
                      help="results folder of the training runs: each finished run is appended as it ends")
    runs.add_argument("--out", dest="store", metavar="DIR", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    runs.add_argument("--resume", action="store_true", help="continue the runs saved in the --store folder")
    add_output_arguments(runs)
    parser.set_defaults(run=run)
