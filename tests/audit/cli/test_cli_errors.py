"""CLI errors found in review: a bad target, unwritable folders and extreme theory parameters give one sentence."""

import pytest
from dpaudit.audit.cli import main


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "numpy:sum"],
        ["suite", "--only", "laplace", "--out", "/dev/null/x"],
        ["experiment", "group-privacy", "--quick", "--out", "/dev/null/x"],
    ],
)
def test_cli_errors_are_one_sentence(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bounds_survive_extreme_parameters(capsys):
    assert main(["bounds", "gaussian", "--sigma", "1e-9", "--json"]) == 0
    assert main(["bounds", "compose", "--epsilon", "1000", "--k", "3", "--json"]) == 0
    assert "Traceback" not in capsys.readouterr().err
