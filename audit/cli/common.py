"""What the subcommands share: one definition of each common flag, and the code that turns flags into API objects.

One flag, one meaning, on every subcommand that has it:

- the game: `--runs R` (multi-run), `--one-run` with `--canaries m`,
  `--k-plus`, `--k-minus` (one-run) → `MultiRun` / `OneRun` (`game_and_bound`);
- the bound: `--estimator`, `--confidence`, `--at-delta` (δ of the bound;
  `--delta` is what a built-in is calibrated to, i.e. the claim's δ) → `Bound`;
- the mechanism: NAME (a built-in or module:attr), `--param`, `--epsilon`, `--delta`;
- output: `--seed`, `--json`, `--quiet` (nothing on stderr but warnings and
  errors: no progress bar, no status line), `--save`, `--report`; where work is distributed, `--workers` and
  `--scheduler`; `--out DIR` is always an output folder.

Start-up: nothing here imports numpy or an audit module at import time.
The choices whose home is a heavy module (estimator names, canary modes,
two-dataset intervals) are `LazyChoices`, read from that home only when an
argument is checked against them; the audit entry points are imported
inside each subcommand's `run(args)`.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import dataclasses
import importlib
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from dpaudit.attacks.games import Game
    from dpaudit.attacks.observations import Observations
    from dpaudit.audit.estimators.certify import Bound
    from dpaudit.audit.results.result import Result
    from dpaudit.mechanisms.base import Mechanism

Container = argparse._ActionsContainer
"""A parser or one of its argument groups."""


class LazyChoices(Sequence):
    """The allowed values of a flag, read from their home (`module.attribute`) the first time they are needed.

    argparse reads choices only to check a value given on the command line
    or to write an error listing them (give the flag a `metavar`, so that
    building the parser does not read them either); until then the home
    module, often a heavy one, is not imported. `describe` names a function
    of the home module that returns them in words, for a help that says
    `%(choices)s` (read only when that help is printed).
    """

    def __init__(self, module: str, attribute: str, describe: str | None = None) -> None:
        self.module, self.attribute, self.describe = module, attribute, describe

    def values(self) -> tuple[str, ...]:
        """Return the choices, importing their home module."""
        return tuple(getattr(importlib.import_module(self.module), self.attribute))

    def described(self) -> str:
        """Return the choices in words: the home's `describe` function, else their names joined by commas."""
        if self.describe is None:
            return ", ".join(self.values())
        return getattr(importlib.import_module(self.module), self.describe)()

    def __contains__(self, value: object) -> bool:
        return value in self.values()

    def __iter__(self) -> Iterator[str]:
        return iter(self.values())

    def __len__(self) -> int:
        return len(self.values())

    def __getitem__(self, index: Any) -> Any:
        return self.values()[index]


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help layout, except that a flag's `LazyChoices` are read only to print a help that says `%(choices)s`
    (as `LazyChoices.described()`), so that the help of a subcommand loads no home module its flags do not name."""

    def _expand_help(self, action: argparse.Action) -> str:
        if isinstance(action.choices, LazyChoices):
            action = copy.copy(action)
            if action.help and "%(choices)s" in action.help:
                action.help = action.help.replace("%(choices)s", action.choices.described().replace("%", "%%"))
            action.choices = None
        return super()._expand_help(action)


RELATIONS = ("add-remove", "replace-one")
"""The values of --relation: those of `dpaudit.mechanisms.base.Relation` (a test checks that they agree)."""

ESTIMATORS = LazyChoices("dpaudit.audit.estimators.certify", "MEMBERSHIP_ESTIMATORS", "describe_estimators")
"""The estimator names of membership scores (`dpaudit.audit.estimators.certify.MEMBERSHIP_ESTIMATORS`), described
by `describe_estimators` in the help."""


# ---- mechanism resolution and --param


def _parse_value(text: str) -> Any:
    """Return `text` as a Python literal when it is one (1, 0.5, True, [1, 2]), else as a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_params(pairs: Sequence[str] | None) -> dict[str, Any]:
    """Return the `--param k=v` pairs as a dict of parsed values."""
    from dpaudit.errors import InvalidParameterError

    params: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidParameterError(f"The --param value {pair!r} is not of the form key=value.")
        params[key.strip()] = _parse_value(value.strip())
    return params


def _in_this_folder(exc: Exception, module_name: str) -> str:
    """Return the remedy when the module that was not found lies in the current folder, which the dpaudit command does
    not search (its script's folder is first on sys.path, not the current one, unlike `python -m`); else ''."""
    top = module_name.split(".")[0]
    if not isinstance(exc, ModuleNotFoundError) or exc.name != top:
        return ""
    if not (os.path.isfile(f"{top}.py") or os.path.isdir(top)):
        return ""
    return " (it is in the current folder, which Python does not search here: run PYTHONPATH=. dpaudit ...)"


def load_attribute(reference: str) -> Any:
    """Return the object named by `module:attr`, or raise `UnknownMechanismError` saying why not."""
    from dpaudit.errors import UnknownMechanismError

    module_name, _, attr = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import failure of user code is one sentence
        raise UnknownMechanismError(f"Cannot import module '{module_name}' of '{reference}': {str(exc).rstrip('.')}"
                                    f"{_in_this_folder(exc, module_name)}.") from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        raise UnknownMechanismError(f"Module '{module_name}' has no attribute '{attr}'.") from None


def resolve_mechanism(
    name: str, params: dict[str, Any], epsilon: float | None, delta: float | None
) -> Mechanism:
    """Return the mechanism `name` (registry name or `module:attr`) with its claim set.

    For a built-in, `epsilon`/`delta` are calibration parameters (and so the
    claim); for `module:attr` (a `Mechanism`, or a factory returning one) they
    override the claim to test.
    """
    from dpaudit.errors import InvalidParameterError, UnknownMechanismError
    from dpaudit.mechanisms.base import Mechanism
    from dpaudit.mechanisms.registry import get_mechanism

    if ":" not in name:
        if epsilon is not None:
            params.setdefault("epsilon", epsilon)
        if delta is not None:
            params.setdefault("delta", delta)
        return get_mechanism(name, **params)
    obj = load_attribute(name)
    if isinstance(obj, Mechanism) and params:
        raise InvalidParameterError(
            f"'{name}' is a Mechanism, which takes no --param ({', '.join(params)}); "
            "to pass parameters, point at a function returning the Mechanism."
        )
    if not isinstance(obj, Mechanism) and callable(obj):
        obj = _call_factory(name, obj, params)
    if not isinstance(obj, Mechanism):
        raise UnknownMechanismError(
            f"'{name}' is neither a Mechanism nor a factory returning one (wrap functions with dpaudit.mechanisms.blackbox)."
        )
    return obj.with_claim(epsilon, delta)


def _call_factory(name: str, factory: Any, params: dict[str, Any]) -> Any:
    """Return factory(**params), or raise `UnknownMechanismError` when it is not a working factory."""
    from dpaudit.errors import UnknownMechanismError

    try:
        return factory(**params)
    except Exception as exc:  # user code: any failure becomes one sentence
        raise UnknownMechanismError(
            f"'{name}' is callable but calling it with {params or 'no parameters'} failed "
            f"({type(exc).__name__}: {exc}); pass a Mechanism, a factory returning one, "
            "or wrap a function fn(data, rng) with dpaudit.mechanisms.blackbox."
        ) from exc


def mechanism_of(args: argparse.Namespace, params: dict[str, Any] | None = None) -> Mechanism:
    """Return the mechanism NAME names (or --command, or NAME run by --python), with --param, --epsilon and --delta applied."""
    from dpaudit.errors import InvalidParameterError

    if getattr(args, "external_command", None) or getattr(args, "python", None):
        return _external_of(args)
    if args.name is None:
        raise InvalidParameterError("Name the mechanism to audit: NAME, module:attr, or --command 'CMD ARGS'.")
    mech = resolve_mechanism(args.name, parse_params(args.param) if params is None else params, args.epsilon, args.delta)
    return _declared(mech, args)


def _declared(mech: Mechanism, args: argparse.Namespace) -> Mechanism:
    """Return `mech` with the relation of --relation and the null record of --null-record, for module:attr.

    A built-in's relation and null record are part of its calibration and
    proof, so the flags are refused for one (one sentence); for a user's
    mechanism they are the claim to test and the record the user declares,
    as `Claim(relation=...)` and `blackbox(..., null_record=...)` are in Python.
    """
    from dpaudit.errors import InvalidParameterError
    from dpaudit.mechanisms.base import Claim

    relation, null = getattr(args, "relation", None), null_of(args)
    if relation is None and null is None:
        return mech
    if ":" not in args.name:
        raise InvalidParameterError(
            f"The built-in '{args.name}' is calibrated and proven under {mech.claim.relation.value}, with its own null "
            "record (`dpaudit list`); --relation and --null-record are for module:attr, --command and --python."
        )
    claim = mech.claim if relation is None else Claim(mech.claim.epsilon, mech.claim.delta, relation)
    return dataclasses.replace(mech, claim=claim, null_record=mech.null_record if null is None else null)


def _external_of(args: argparse.Namespace) -> Mechanism:
    """Return the mechanism of --command 'CMD ARGS', or of NAME (module:attr) run by the Python at --python."""
    from dpaudit.errors import InvalidParameterError
    from dpaudit.mechanisms.external.processes import external, external_python

    if args.epsilon is None:
        raise InvalidParameterError("A mechanism outside this Python needs --epsilon (and --delta): the claim to test.")
    if args.param:
        raise InvalidParameterError("--param is for built-ins; pass an external program its parameters in --command.")
    claim = {"epsilon": args.epsilon, "delta": args.delta or 0.0, "relation": args.relation or "add-remove",
             "null_record": null_of(args), "timeout": batch_timeout(args)}
    if args.external_command:
        if args.name or args.python:
            raise InvalidParameterError("Pass either --command 'CMD ARGS', or NAME with --python PATH, not both.")
        return external(args.external_command, **claim)
    if not args.name or ":" not in args.name:
        raise InvalidParameterError("--python PATH runs NAME, the module:attr of a function in that environment; "
                                    f"got {args.name!r}.")
    return external_python(args.python, args.name, path=[os.getcwd()], **claim)


def batch_timeout(args: argparse.Namespace) -> float:
    """Return the seconds one batch of an external mechanism may take: --timeout when given, else the protocol's default.

    One batch never outlives the whole audit's --timeout, and a slow batch
    (a library call of a minute) runs when --timeout allows it.
    """
    from dpaudit.mechanisms.external.processes import DEFAULT_TIMEOUT

    given = getattr(args, "timeout", None)
    return DEFAULT_TIMEOUT if given is None else given


DATASET_FORMS = "a JSON list such as [0, 0, 1] or an object of columns such as {\"age\": [30, 41]}"


def dataset_of(text: str) -> list[Any] | dict[str, list[Any]]:
    """Return the dataset of --d0/--d1: a JSON list (numbers, lists of numbers, strings), or an object of
    columns (name → a list of values), the two forms the external protocol carries."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise argparse.ArgumentTypeError(f"'{text}' is not {DATASET_FORMS}") from None
    if isinstance(value, dict) and value and all(isinstance(column, list) for column in value.values()):
        return value
    if not isinstance(value, list):
        raise argparse.ArgumentTypeError(f"'{text}' is not {DATASET_FORMS}")
    return value


def record_of(text: str) -> Any:
    """Return the record of --null-record: a JSON value (a number, a string, a list of numbers for a vector record), or
    an object of columns holding one value each (a row of a table given as columns: `null_of` orders it)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a JSON record such as 0, \"none\" or [0, 0]") from None
    row = isinstance(value, dict) and value and not any(isinstance(v, (dict, list)) or v is None for v in value.values())
    if value is None or (isinstance(value, dict) and not row):
        raise argparse.ArgumentTypeError(f"'{text}' is not a record: give a number, a string, a list, such as 0, "
                                         "or for a table of columns one value a column, such as {\"age\": 0}")
    return value


def null_of(args: argparse.Namespace) -> Any:
    """Return --null-record as a mechanism takes it: an object of columns becomes the row of its values in --d0's
    column order (the order a table's records are read in); one sentence when --d0 is not a table of those columns."""
    from dpaudit.errors import InvalidParameterError

    null, table = getattr(args, "null_record", None), getattr(args, "d0", None)
    if not isinstance(null, dict):
        return null
    if not isinstance(table, dict) or set(table) != set(null):
        remedy = (f": give --d0 and --d1 as objects of the same columns ({', '.join(map(str, null))}), or"
                  if hasattr(args, "d0") else ", which only a pair of tables has (dpaudit audit --d0, --d1): give")
        raise InvalidParameterError(f"--null-record {json.dumps(null)} is a row of columns{remedy} the record as a number "
                                    "or a list.")
    return [null[name] for name in table]


CLI_REMEDIES = (
    ("relation='replace-one'", "--relation replace-one"),
    ("blackbox(..., null_record=...)", "--null-record JSON (e.g. --null-record 0)"),
    ("canary='pair'", "--canary pair"),
)
"""How the remedies in a refusal of the Python API are spelled on the command line (`in_cli_words`)."""


def in_cli_words(sentence: str) -> str:
    """Return a refusal with its Python remedies (`relation='replace-one'`, ...) spelled as the CLI's flags."""
    for python, flag in CLI_REMEDIES:
        sentence = sentence.replace(python, flag)
    return sentence


# ---- flag definitions


def add_mechanism_arguments(parser: Container, *, optional: bool = False,
                            name_help: str = "a built-in mechanism (see `dpaudit list`) or module:attr") -> None:
    """Add NAME (optional with `optional`), --param, --epsilon and --delta."""
    parser.add_argument("name", metavar="NAME", nargs="?" if optional else None, help=name_help)
    parser.add_argument("--param", action="append", metavar="K=V", help="a mechanism parameter (repeatable)")
    parser.add_argument("--epsilon", type=float, help="ε a built-in is calibrated to; else the claim to test")
    add_claim_delta(parser)
    parser.add_argument("--relation", choices=RELATIONS,
                        help="module:attr or an external program: the neighbouring relation of the claim to test "
                             "(default: the mechanism's; an external program's: add-remove)")
    parser.add_argument("--null-record", type=record_of, metavar="JSON",
                        help="module:attr or an external program: the record that stands for no record under "
                             "add-remove (e.g. 0 for a sum), so that equal-length pairs with it are neighbours")


def add_external_arguments(parser: Container) -> None:
    """Add --command, --python, --d0 and --d1: a mechanism outside this Python, and the pair to audit it on."""
    parser.add_argument("--command", dest="external_command", metavar="'CMD ARGS'",
                        help="audit a program in any language that speaks dpaudit's external protocol"
                             " (dpaudit.mechanisms.external.processes; no NAME; --epsilon/--delta: its claim)")
    parser.add_argument("--python", metavar="PATH",
                        help="run NAME (module:attr, importable from the current folder) with this Python, in its own"
                             " environment")
    parser.add_argument("--d0", type=dataset_of, metavar="JSON",
                        help="the first dataset, e.g. '[0, 0, 0]' or '{\"age\": [30, 40]}' (columns)")
    parser.add_argument("--d1", type=dataset_of, metavar="JSON", help="its neighbour, e.g. '[0, 0, 1]'")


def add_claim_delta(parser: Container, *, default: float | None = None, help: str | None = None) -> None:
    """Add --delta: δ a built-in is calibrated to, i.e. the claim's δ (never the δ of the bound: --at-delta)."""
    parser.add_argument("--delta", type=float, default=default,
                        help=help or "δ a built-in is calibrated to, or the claim's δ")


@dataclasses.dataclass(frozen=True)
class GameFlags:
    """A subcommand's defaults for the game flags: R runs (multi-run), m canaries (one-run; None: the audit's choice)."""

    runs: int
    canaries: int | None
    canaries_default: str = ""
    """How --help states the default of --canaries (default: the number)."""
    runs_default: str = ""
    """How --help states the default of --runs (default: the number)."""


def add_game_arguments(parser: Container, flags: GameFlags) -> None:
    """Add the game: --runs (multi-run), --one-run with --canaries, --k-plus, --k-minus."""
    default = flags.runs_default or f"{flags.runs:,}"
    parser.add_argument("--runs", type=runs_argument, metavar="R",
                        help=f"multi-run: the number of runs (default {default}), or 'sequential': runs in epochs, an"
                             " anytime-valid bound looked at after every batch, stopping at a certified violation, when the"
                             " claim is out of reach, or at the budget")
    parser.add_argument("--max-runs", type=int, metavar="R",
                        help=f"with --runs sequential: the most runs played (default {flags.runs:,})")
    parser.add_argument("--one-run", action="store_true",
                        help="play the one-run game: m canaries, each in with probability ½, in one run")
    parser.add_argument("--canaries", type=int, metavar="M",
                        help=f"one-run: the number of canaries m (default {flags.canaries_default or flags.canaries})")
    parser.add_argument("--k-plus", type=int, metavar="K", help="one-run: guess IN for the k+ highest scores (fixed in advance)")
    parser.add_argument("--k-minus", type=int, metavar="K", help="one-run: guess OUT for the k− lowest scores (fixed in advance)")


def runs_argument(text: str) -> int | str:
    """Return `text` as a number of runs, or "sequential"."""
    from dpaudit.attacks.games import SEQUENTIAL

    if text.strip().lower() == SEQUENTIAL:
        return SEQUENTIAL
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is neither a number of runs nor 'sequential'") from None


def add_confidence(parser: Container) -> None:
    """Add --confidence (1 − β of the lower bound)."""
    parser.add_argument("--confidence", type=float, default=0.95, help="confidence of the lower bound (default 0.95)")


def add_bound_arguments(parser: Container) -> None:
    """Add how a membership game is certified: --estimator, --confidence, --at-delta."""
    parser.add_argument("--estimator", choices=ESTIMATORS, metavar="NAME", help="%(choices)s")
    add_confidence(parser)
    parser.add_argument("--at-delta", type=float, metavar="DELTA",
                        help="δ of the lower bound (default: the claim's δ)")


def add_scorer(parser: Container, *, help: str, choices: Sequence[str] | None = None, default: str | None = None,
               score_alias: bool = False) -> None:
    """Add --scorer (how the game's outputs are scored); `score_alias`: also the deprecated, hidden --score."""
    parser.add_argument("--scorer", choices=choices, default=default, help=help)
    if score_alias:
        parser.add_argument("--score", dest="scorer", choices=choices, default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def add_seed(parser: Container) -> None:
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def add_json(parser: Container) -> None:
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")


def add_quiet(parser: Container) -> None:
    parser.add_argument("--quiet", action="store_true",
                        help="nothing on stderr but warnings and errors (no progress bar, no status line)")


def add_save(parser: Container) -> None:
    parser.add_argument("--save", metavar="FILE", help="also write the game's scores and truth (.json or .npz)")


SCORE_REPORT = "score histograms and ROC"
"""What the report of a membership audit shows."""


def add_report(parser: Container, what: str = SCORE_REPORT) -> None:
    parser.add_argument("--report", metavar="FILE", help=f"write a report with the {what} (.html or .md)")


def add_output_arguments(parser: Container, *, save: bool = True, report: str | None = SCORE_REPORT) -> None:
    """Add --seed, --json, --quiet, and --save (with `save`) and --report (unless `report` is None)."""
    add_seed(parser)
    add_json(parser)
    add_quiet(parser)
    if save:
        add_save(parser)
    if report is not None:
        add_report(parser, report)


def add_membership_arguments(parser: Container, flags: GameFlags) -> None:
    """Add the flags every membership audit shares: the game, the bound and the output."""
    add_game_arguments(parser, flags)
    add_bound_arguments(parser)
    add_output_arguments(parser)


def add_execution_arguments(parser: Container) -> None:
    """Add where the work runs: --workers N (a local Dask cluster) or --scheduler ADDRESS (a running one)."""
    parser.add_argument("--workers", type=int, metavar="N",
                        help="run on a local Dask cluster of N worker processes (needs dpaudit[dask])")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run on the Dask cluster whose scheduler is at ADDRESS (needs dpaudit[dask])")


def add_output_folder(parser: Container, what: str, default: str | None = None) -> None:
    """Add --out DIR, an output folder (never a folder to resume from: that is dpsgd's --store)."""
    parser.add_argument("--out", metavar="DIR", default=default, help=f"output folder: {what}")


# ---- flags → API objects


def game_and_bound(args: argparse.Namespace, flags: GameFlags | None, *, delta: float | None) -> tuple[Game, Bound]:
    """Return the game (`MultiRun` or `OneRun`) and the `Bound` that the flags ask for.

    `flags`: the subcommand's defaults; None for saved scores, whose game
    takes its size from the scores (so --runs and --canaries are refused).
    `delta`: the δ of the bound (None: the claim's).

    Raises:
        InvalidParameterError: flags or an estimator of the other game, or a bad value (one sentence).
    """
    from dpaudit.attacks.games import MultiRun, OneRun
    from dpaudit.audit.estimators.certify import Bound
    from dpaudit.errors import InvalidParameterError

    one_run, sized = args.one_run, args.runs is not None or getattr(args, "max_runs", None) is not None
    if one_run and sized:
        raise InvalidParameterError("--runs and --max-runs set the multi-run game; with --one-run, give --canaries instead.")
    if not one_run and (args.canaries is not None or args.k_plus is not None or args.k_minus is not None):
        raise InvalidParameterError("--canaries, --k-plus and --k-minus set the one-run game; add --one-run.")
    if flags is None:
        if sized or args.canaries is not None:
            raise InvalidParameterError("With --scores the game's size is that of the saved scores; drop --runs, --max-runs "
                                        "and --canaries.")
        game = OneRun.with_guesses(None, args.k_plus, args.k_minus) if one_run else MultiRun()
    elif one_run:
        game = OneRun.with_guesses(flags.canaries if args.canaries is None else args.canaries, args.k_plus, args.k_minus)
    else:
        game = _multi_run(args, flags)
    bound = Bound(estimator=args.estimator, confidence=args.confidence, delta=delta)
    bound.estimator_for(game, 1.0 if delta is None else delta)  # an estimator of the other game fails before any work
    return game, bound


def _multi_run(args: argparse.Namespace, flags: GameFlags) -> Game:
    """Return the multi-run game of --runs R (default: the subcommand's), or of --runs sequential with --max-runs."""
    from dpaudit.attacks.games import SEQUENTIAL, MultiRun
    from dpaudit.errors import InvalidParameterError

    max_runs = getattr(args, "max_runs", None)
    if args.runs == SEQUENTIAL:
        return MultiRun(flags.runs if max_runs is None else max_runs, sequential=True)
    if max_runs is not None:
        raise InvalidParameterError("--max-runs budgets --runs sequential; with a fixed number of runs it would do "
                                    "nothing: pass --runs sequential, or drop it.")
    return MultiRun(flags.runs if args.runs is None else args.runs)


def check_output_paths(args: argparse.Namespace) -> None:
    """Raise before any work when --save, --report, --out or --store names a place that cannot be written (one sentence)."""
    from dpaudit.errors import InvalidParameterError

    if getattr(args, "save", None):
        from dpaudit.attacks.observations import Observations

        Observations.check_path(args.save)
        _check_file(args.save, "--save")
    if getattr(args, "report", None):
        from dpaudit.audit.results.pages import check_report_path

        check_report_path(args.report)
        _check_file(args.report, "--report")
    for flag in ("out", "store"):
        folder = getattr(args, flag, None)
        if folder and os.path.exists(folder) and not os.path.isdir(folder):
            raise InvalidParameterError(f"--{flag} needs a folder, and '{folder}' is a file; give a folder's name.")
        if folder:
            _check_writable(folder, f"--{flag}")


def _check_file(path: str, flag: str) -> None:
    """Raise unless `path` can be a file written by `flag`: not a folder, in a folder that can be written or made."""
    from dpaudit.errors import InvalidParameterError

    if os.path.isdir(path):
        raise InvalidParameterError(f"{flag} needs a file name, and '{path}' is a folder.")
    _check_writable(os.path.dirname(os.path.abspath(path)), flag)


def _check_writable(folder: str, flag: str) -> None:
    """Raise unless `folder`, or the nearest folder above it that exists, can be written to."""
    from dpaudit.errors import InvalidParameterError

    existing = os.path.abspath(folder)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise InvalidParameterError(f"{flag} cannot write under '{folder}': '{existing}' is a file, not a folder.")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InvalidParameterError(f"{flag} cannot write under '{folder}': the folder '{existing}' is not writable.")


def user_output_to_stderr() -> contextlib.AbstractContextManager:
    """Return a context in which what the audited code prints goes to stderr, so that stdout holds the result alone (--json)."""
    return contextlib.redirect_stdout(sys.stderr)


def execution_of(args: argparse.Namespace) -> Any:
    """Return the `Execution` of --workers and --scheduler (and the progress bar, unless --quiet)."""
    from dpaudit.execution.execution import Execution

    return Execution(workers=args.workers, scheduler=args.scheduler, progress=progress_wanted(args))


def progress_wanted(args: argparse.Namespace) -> bool:
    """Return True when a progress bar may be drawn: not --quiet, and stderr is a terminal."""
    from dpaudit.execution.progress import wanted

    return wanted(quiet=args.quiet)


def show(result: Result, as_json: bool) -> None:
    """Print the result as JSON, or as its table."""
    if as_json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        from rich.console import Console

        Console().print(result.table())


def emit(result: Result, args: argparse.Namespace, *, event: Any = None) -> int:
    """Print the result (JSON with --json), then write its observations (--save) and its report (--report).

    Returns the exit status of the verdict: 1 on a violation (certified
    by an assumption-free bound), else 0. A write that fails after the
    result is printed is one sentence on stderr and never hides the
    verdict: a violation keeps status 1, else the status is 2; scores that
    --save could not write go to a file in the system's temporary folder,
    named on stderr, so that a long audit's scores are never lost.
    """
    from dpaudit.audit.results.result import VIOLATION

    show(result, args.json)
    status = 1 if result.verdict == VIOLATION else 0
    observations: Observations | None = getattr(result, "observations", None)
    failed = False
    if getattr(args, "save", None) and observations is not None:
        failed |= not _save_or_keep(observations, args.save)
    if args.report:
        from dpaudit.audit.results.report import write_report

        try:
            write_report(result, args.report, event=event)
        except OSError as exc:
            print(f"dpaudit: error: cannot write the report {args.report}: {exc.strerror or exc}.", file=sys.stderr)
            failed = True
    return 2 if failed and status == 0 else status


def _save_or_keep(observations: Observations, path: str) -> bool:
    """Save the observations to `path`; when that fails, to a temporary file named on stderr. Return True when `path` was written."""
    import tempfile

    try:
        observations.save(path)
        return True
    except OSError as exc:
        reason = exc.strerror or exc
    try:
        handle, kept = tempfile.mkstemp(prefix="dpaudit-scores-", suffix=os.path.splitext(path)[1] or ".npz")
        os.close(handle)
        observations.save(kept)
    except OSError as again:
        print(f"dpaudit: error: cannot write {path} ({reason}), nor a temporary copy ({again.strerror or again}).",
              file=sys.stderr)
        return False
    print(f"dpaudit: error: cannot write {path} ({reason}); the scores are in {kept}.", file=sys.stderr)
    return False
