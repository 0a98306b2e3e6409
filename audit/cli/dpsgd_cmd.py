"""`dpaudit dpsgd ...`: audit DP-SGD training (dpaudit's trainer, a buggy variant, Opacus, or yours) with canaries.

Exit status: 0 consistent, 1 violation of the claim by an assumption-free
bound, 2 bad input, 130 on Ctrl-C (finished runs stay in --out; rerun with
--resume). Output as `dpaudit canary`: a table or JSON, --save, --report.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dpaudit.attacks.dpsgd.canaries import CANARY_KINDS, DIRAC, DIRAC_TARGETS, QUIET
from dpaudit.attacks.dpsgd.game import DPAUDIT, TARGETS
from dpaudit.attacks.dpsgd.scores import BLACK_BOX_SCORES, LOSS, THREATS, WHITE_BOX
from dpaudit.audit.cli.canary_cmd import add_estimator_arguments, check_report_argument, emit
from dpaudit.audit.cli.common import load_attribute
from dpaudit.audit.execution.progress import wanted
from dpaudit.mechanisms.dpsgd.config import BATCHINGS, BUGS, DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import DATASETS
from dpaudit.mechanisms.dpsgd.models import MODELS
from dpaudit.mechanisms.errors import UnknownMechanismError

DEFAULTS = DPSGDConfig()


def run(args: argparse.Namespace) -> int:
    """Run the DP-SGD audit; return the exit status."""
    from dpaudit.audit.audits.dpsgd import DPSGDInterrupted, Execution, audit_dpsgd

    check_report_argument(args)
    config = DPSGDConfig(
        model=args.model, data=args.data, noise_multiplier=args.noise_multiplier, clip_norm=args.clip_norm,
        sample_rate=args.sample_rate, steps=args.steps, learning_rate=args.learning_rate, batching=args.batching,
        delta=args.delta, bug=args.bug,
    )
    target = _target(args.target)
    execution = Execution(out=args.out, resume=args.resume, workers=args.workers, scheduler=args.scheduler,
                          progress=wanted(quiet=args.quiet))
    try:
        result = audit_dpsgd(
            config, target=target, canary=args.canary, dirac_target=args.dirac_target, threat=args.threat,
            score=args.score, runs=args.runs, one_run=args.one_run, canaries=args.canaries,
            estimator=args.estimator, confidence=args.confidence, delta=args.at_delta, k_plus=args.k_plus,
            k_minus=args.k_minus, execution=execution, seed=args.seed,
        )
    except DPSGDInterrupted as stop:
        where = f"; they are saved in {stop.folder}, rerun with --resume" if stop.folder else " (pass --out to keep runs)"
        print(f"dpaudit: interrupted after {stop.finished} of {stop.total} training runs{where}.", file=sys.stderr)
        return 130
    return emit(result, args)


def _target(name: str) -> Any:
    """Return "dpaudit", "opacus", or the `UserTrainer` that `module:attr` names."""
    if ":" not in name:
        return name
    from dpaudit.mechanisms.dpsgd.user_trainer import UserTrainer

    found = load_attribute(name)
    if not isinstance(found, UserTrainer):
        raise UnknownMechanismError(f"'{name}' is not a UserTrainer (wrap your training function with "
                                    "dpaudit.mechanisms.dpsgd.user_trainer.UserTrainer).")
    return found


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `dpsgd` subcommand."""
    parser = subparsers.add_parser("dpsgd", help="audit DP-SGD training with canaries (dpaudit's trainer or Opacus)")
    training = parser.add_argument_group("training")
    training.add_argument("--target", default=DPAUDIT, metavar="{" + ",".join(TARGETS) + ",module:attr}",
                          help="dpaudit's trainer, Opacus, or module:attr naming a UserTrainer (default dpaudit)")
    training.add_argument("--bug", choices=BUGS, help="train a known-buggy variant of dpaudit's trainer")
    training.add_argument("--model", choices=MODELS, default=DEFAULTS.model, help="logreg or mlp (default logreg)")
    training.add_argument("--data", choices=DATASETS, default=DEFAULTS.data, help="digits or synthetic (default digits)")
    training.add_argument("--noise-multiplier", type=float, default=DEFAULTS.noise_multiplier, help="σ (default 1)")
    training.add_argument("--clip-norm", type=float, default=DEFAULTS.clip_norm, help="C (default 1)")
    training.add_argument("--sample-rate", type=float, default=DEFAULTS.sample_rate, help="q (default 256/1797)")
    training.add_argument("--steps", type=int, default=DEFAULTS.steps, help="T (default 100)")
    training.add_argument("--learning-rate", type=float, default=DEFAULTS.learning_rate, help="lr (default 2)")
    training.add_argument("--batching", choices=BATCHINGS, default=DEFAULTS.batching,
                          help="poisson sampling or shuffled fixed-size batches (default poisson)")
    training.add_argument("--delta", type=float, default=DEFAULTS.delta, help="δ of the claim (default 1e-5)")
    attack = parser.add_argument_group("attack")
    attack.add_argument("--canary", choices=CANARY_KINDS, default=DIRAC, help="dirac, crafted or mislabelled (default dirac)")
    attack.add_argument("--dirac-target", choices=DIRAC_TARGETS, default=QUIET,
                        help="coordinates of Dirac canaries: the quietest at θ₀, or biases (default quiet)")
    attack.add_argument("--threat", choices=THREATS, default=WHITE_BOX,
                        help="white-box (every iterate) or black-box (final model) (default white-box)")
    attack.add_argument("--score", choices=BLACK_BOX_SCORES, default=LOSS,
                        help="black-box score of input canaries: loss or loss-difference (default loss)")
    attack.add_argument("--runs", type=int, default=200, help="multi-run: training runs (default 200)")
    attack.add_argument("--one-run", action="store_true", help="one training run with --canaries canaries")
    attack.add_argument("--canaries", type=int, default=100, help="one-run: the number of canaries m (default 100)")
    add_estimator_arguments(attack)
    attack.add_argument("--at-delta", type=float, help="δ of the lower bound (default: the claim's δ)")
    runs = parser.add_argument_group("execution and output")
    runs.add_argument("--workers", type=int, help="train on a local Dask cluster of N processes (needs dpaudit[dask])")
    runs.add_argument("--scheduler", metavar="ADDRESS", help="train on an existing Dask cluster")
    runs.add_argument("--out", metavar="DIR", help="results folder: each finished run is appended as it ends")
    runs.add_argument("--resume", action="store_true", help="continue the runs saved in --out")
    runs.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    runs.add_argument("--quiet", action="store_true", help="no progress bar")
    runs.add_argument("--json", action="store_true", help="print the JSON result")
    runs.add_argument("--save", metavar="FILE", help="also write the game's scores and truth (.json or .npz)")
    runs.add_argument("--report", metavar="FILE", help="write a report with score histograms and ROC (.html or .md)")
    parser.set_defaults(run=run)
