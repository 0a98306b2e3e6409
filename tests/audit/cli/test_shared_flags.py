"""One flag, one meaning: the flags the audit subcommands share, their aliases, the bounds table and start-up cost."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest
from dpaudit.audit.cli import COMMANDS, build_parser, main
from dpaudit.audit.cli.bounds_cmd import KINDS

MEMBERSHIP = ("canary", "one-run", "trace", "dpsgd")
AUDITS = ("audit", "suite", *MEMBERSHIP)
GAME_FLAGS = ("--runs", "--one-run", "--canaries", "--k-plus", "--k-minus")
BOUND_FLAGS = ("--estimator", "--confidence", "--at-delta")
OUTPUT_FLAGS = ("--seed", "--json", "--quiet", "--save", "--report")
SHARED = (*GAME_FLAGS, *BOUND_FLAGS, *OUTPUT_FLAGS, "--scorer", "--delta")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.fixture(scope="module")
def commands() -> dict[str, argparse.ArgumentParser]:
    return _subparsers(build_parser())


def _option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action:
    return parser._option_string_actions[flag]


def _definition(action: argparse.Action) -> tuple:
    """What a flag is, apart from its help text (which may state a subcommand's default)."""
    choices = None if action.choices is None else tuple(action.choices)
    return type(action), action.dest, action.type, action.nargs, action.const, choices, action.metavar, action.required


def test_every_membership_subcommand_takes_the_shared_flags(commands):
    for name in MEMBERSHIP:
        missing = [flag for flag in SHARED if flag not in commands[name]._option_string_actions]
        assert not missing, f"dpaudit {name} lacks {missing}"


@pytest.mark.parametrize("flag", [*GAME_FLAGS, *BOUND_FLAGS, *OUTPUT_FLAGS])
def test_a_shared_flag_is_defined_the_same_way_everywhere(commands, flag):
    definitions = {name: _definition(_option(commands[name], flag)) for name in MEMBERSHIP}
    assert len(set(definitions.values())) == 1, definitions
    defaults = {name: _option(commands[name], flag).default for name in MEMBERSHIP if name != "one-run"}
    assert len(set(defaults.values())) == 1, defaults


def test_quiet_seed_json_and_confidence_mean_the_same_on_every_audit_subcommand(commands):
    for flag in ("--quiet", "--seed", "--json", "--confidence"):
        helps = {_option(commands[name], flag).help for name in AUDITS}
        definitions = {_definition(_option(commands[name], flag)) for name in AUDITS}
        assert len(helps) == 1 and len(definitions) == 1, (flag, helps)


def test_workers_and_scheduler_have_one_definition(commands):
    for flag in ("--workers", "--scheduler"):
        actions = [_option(commands[name], flag) for name in ("audit", "dpsgd")]
        assert len({(_definition(a), a.help) for a in actions}) == 1


def test_out_is_an_output_folder_and_dpsgd_keeps_its_runs_in_store(commands):
    for name in ("suite", "experiment"):
        assert _option(commands[name], "--out").help.startswith("output folder")
    dpsgd = commands["dpsgd"]
    assert dpsgd.parse_args(["--store", "runs"]).store == "runs"
    assert dpsgd.parse_args(["--out", "runs"]).store == "runs"  # the deprecated alias
    assert "--store" in dpsgd.format_help() and "--out" not in dpsgd.format_help()


@pytest.mark.parametrize("name, value", [("trace", "tardos"), ("dpsgd", "loss-difference")])
def test_score_is_a_hidden_alias_of_scorer(commands, name, value):
    parser = commands[name]
    head = ["marginals_gaussian", "--rows", "10", "--dim", "3"] if name == "trace" else []
    assert parser.parse_args([*head, "--score", value]).scorer == value
    assert parser.parse_args([*head, "--scorer", value]).scorer == value
    assert parser.parse_args(head).scorer == _option(parser, "--scorer").default
    assert "--scorer" in parser.format_help() and "--score " not in parser.format_help()


def _without_seconds(out: str) -> dict:
    data = json.loads(out)
    data.pop("seconds")
    return data


def test_the_old_score_flag_gives_the_same_audit(capsys):
    argv = ["trace", "marginals_gaussian", "--rows", "50", "--dim", "200", "--runs", "400", "--json"]
    assert main([*argv, "--score", "tardos"]) == 0
    old = _without_seconds(capsys.readouterr().out)
    assert main([*argv, "--scorer", "tardos"]) == 0
    assert _without_seconds(capsys.readouterr().out) == old and old["scorer"] == "tracing (tardos)"


def test_one_run_is_canary_with_one_run(capsys):
    argv = ["canary_gaussian_sum", "--canaries", "200", "--k-plus", "20", "--k-minus", "20", "--seed", "3", "--json"]
    status = main(["one-run", *argv])
    first = _without_seconds(capsys.readouterr().out)
    assert main(["canary", "--one-run", *argv]) == status
    assert _without_seconds(capsys.readouterr().out) == first and first["game"] == "one-run"


TARGET = {
    "canary": ["canary", "canary_gaussian_sum"],
    "one-run": ["one-run", "canary_gaussian_sum"],
    "trace": ["trace", "marginals_laplace", "--rows", "10", "--dim", "3"],
    "dpsgd": ["dpsgd", "--steps", "2", "--quiet"],
}


@pytest.mark.parametrize("name", MEMBERSHIP)
@pytest.mark.parametrize("game, estimator, other", [([], "one-run-fdp", "multi-run"), (["--one-run"], "gdp", "one-run")])
def test_an_estimator_of_the_other_game_is_one_sentence_and_status_2(capsys, name, game, estimator, other):
    if name == "one-run" and other == "multi-run":
        pytest.skip("one-run always plays the one-run game")
    assert main([*TARGET[name], *game, "--estimator", estimator]) == 2
    out, err = capsys.readouterr()
    assert not out and err.count("\n") == 1 and "Traceback" not in err
    assert f"The {other} game is certified by" in err and repr(estimator) in err


@pytest.mark.parametrize("name", MEMBERSHIP)
@pytest.mark.parametrize("extra, words", [
    (["--canaries", "10"], "add --one-run"),
    (["--one-run", "--runs", "10"], "with --one-run, give --canaries"),
])
def test_flags_of_the_other_game_are_refused(capsys, name, extra, words):
    if name == "one-run" and "--canaries" in extra:
        pytest.skip("one-run always plays the one-run game")
    assert main([*TARGET[name], *extra]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_saved_scores_take_the_games_size_from_the_file(capsys, tmp_path):
    from dpaudit.attacks.observations import Observations

    path = Observations(scores=[0.1, 0.9, 0.2, 0.8, 0.4, 0.7], truth=[0, 1, 0, 1, 0, 1]).save(tmp_path / "s.json")
    assert main(["canary", "--scores", str(path), "--runs", "100"]) == 2
    assert "size is that of the saved scores" in capsys.readouterr().err


def test_lazy_choices_are_those_of_their_homes(commands):
    from dpaudit.attacks.canary_design import CANARY_MODES, DEFAULT_DIM
    from dpaudit.attacks.games import DEFAULT_CANARIES
    from dpaudit.audit.cli.canary_cmd import GAME
    from dpaudit.audit.estimators.certify import MEMBERSHIP_ESTIMATORS as ESTIMATORS
    from dpaudit.audit.estimators.intervals import INTERVALS

    assert tuple(_option(commands["canary"], "--estimator").choices) == tuple(ESTIMATORS)
    assert tuple(_option(commands["canary"], "--canary").choices) == CANARY_MODES
    assert tuple(_option(commands["audit"], "--interval").choices) == INTERVALS
    assert f"default {DEFAULT_DIM};" in _option(commands["canary"], "--dim").help
    assert GAME.canaries == DEFAULT_CANARIES
    from dpaudit.audit.cli.common import HelpFormatter

    shown = HelpFormatter("dpaudit trace")._expand_help(_option(commands["trace"], "--estimator"))
    for name in ESTIMATORS:  # the help names every estimator, read from the registry when the help is printed
        assert name in shown


def test_the_bounds_table_covers_every_kind(commands, capsys):
    kinds = _subparsers(commands["bounds"])
    assert list(kinds) == list(KINDS)
    minimal = {"compose": ["--epsilon", "1", "--k", "3"], "gaussian": ["--sigma", "2"],
               "calibrate-gaussian": ["--epsilon", "1"], "subsample": ["--epsilon", "1", "--q", "0.1"],
               "shuffle": ["--epsilon0", "1", "--n", "10000"], "group": ["--epsilon", "1", "--k", "2"],
               "convert": ["--epsilon", "1"]}
    assert set(minimal) == set(KINDS)
    for kind, argv in minimal.items():
        assert main(["bounds", kind, *argv, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["command"] == kind and data["bounds"] and all(row["bound"] for row in data["bounds"])
        assert main(["bounds", kind, *argv]) == 0
        assert KINDS[kind].help in capsys.readouterr().out


def test_every_command_is_registered_with_its_module(commands):
    assert list(commands) == list(COMMANDS)
    for name, parser in commands.items():
        assert parser.get_default("run") is not None, name


HEAVY = ("numpy", "scipy", "statsmodels", "dp_accounting", "torch", "matplotlib", "rich.progress",
         "dpaudit.audit.estimators.certify", "dpaudit.audit.audits.canaries", "dpaudit.audit.audits.two_dataset",
         "dpaudit.audit.theory")


def _loaded_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_dpaudit_help_loads_nothing_heavy():
    loaded = _loaded_after("from dpaudit.audit.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_building_every_parser_loads_no_audit_module():
    loaded = _loaded_after("from dpaudit.audit.cli import build_parser\nbuild_parser().format_help()")
    assert not loaded & set(HEAVY[2:]), loaded & set(HEAVY[2:])
