"""`dpaudit trace`: each wrong marginal mechanism is flagged by its docstring's command, correct ones are not."""

import json
import re
import shlex

import pytest
from dpaudit.audit.cli import main
from dpaudit.mechanisms.registry import factory

BUGGY = {  # wrong mechanism → the correct mechanism its command is re-run on
    "marginals_gaussian_linf": "marginals_gaussian",
    "marginals_laplace_per_coordinate": "marginals_laplace",
    "marginals_stale_rows": "marginals_laplace",
    "marginals_exact": "marginals_linf",
}


def _command(name: str) -> list[str]:
    found = re.search(r"`dpaudit (trace [^`]+)`", factory(name).__doc__)
    assert found, f"{name}'s docstring names no `dpaudit trace` command"
    return shlex.split(found.group(1))


@pytest.mark.parametrize("name", BUGGY)
def test_docstring_command_flags_the_wrong_mechanism(name, capsys):
    assert main(_command(name) + ["--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "violation" and out["lower_bound"]["epsilon"] > out["claim"]["epsilon"]
    assert out["attack"]["rows"] == 100 and out["scorer"].startswith("tracing")


@pytest.mark.parametrize("name", BUGGY)
def test_the_same_command_on_the_correct_mechanism_is_consistent_over_20_seeds(name, capsys):
    argv = _command(name)
    argv[1] = BUGGY[name]
    statuses = [main(argv + ["--seed", str(seed), "--json"]) for seed in range(20)]
    capsys.readouterr()
    assert statuses == [0] * 20


def test_one_run_report_and_saved_scores(tmp_path, capsys):
    report, scores = tmp_path / "trace.html", tmp_path / "scores.npz"
    argv = ["trace", "marginals_exact", "--rows", "200", "--dim", "2000", "--one-run", "--scorer", "tardos",
            "--biases", "tardos", "--report", str(report), "--save", str(scores)]
    assert main(argv) == 1
    assert "VIOLATION" in capsys.readouterr().out
    assert report.read_text().startswith("<!DOCTYPE html>") and "data:image/png;base64," in report.read_text()
    assert scores.stat().st_size > 0


@pytest.mark.parametrize("extra, message", [
    (["--rows", "0", "--dim", "3"], "'num_rows' parameter"),
    (["--rows", "10", "--dim", "3", "--scorer", "reference"], "needs reference_rows"),
    (["--rows", "10", "--dim", "3", "--report", "out.pdf"], "must end in .html or .md"),
    (["--rows", "10", "--dim", "3", "--one-run", "--estimator", "gdp"], "certified by one-run or one-run-fdp"),
])
def test_bad_input_exits_2_with_one_sentence(extra, message, capsys):
    assert main(["trace", "marginals_laplace"] + extra) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
