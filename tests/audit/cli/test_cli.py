"""The CLI contract: JSON keys, exit codes, and one-sentence errors for bad input."""

import json

import pytest
from dpaudit.audit.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_audit_json_contract(capsys):
    code, out, _ = run(capsys, "audit", "laplace", "--epsilon", "1", "--trials", "100000", "--seed", "0", "--json")
    data = json.loads(out)
    assert code == 0
    for key in ("mechanism", "params", "claim", "upper_bound", "lower_bound", "verdict", "tightness", "seconds", "seed"):
        assert key in data
    for key in ("epsilon", "confidence", "method", "trials", "fpr", "fnr"):
        assert key in data["lower_bound"]
    assert data["claim"]["epsilon"] == 1.0 and data["verdict"] == "consistent"


def test_violation_exit_status(capsys):
    code, out, _ = run(capsys, "audit", "histogram_wrong_sensitivity", "--trials", "200000", "--json")
    assert code == 1 and json.loads(out)["verdict"] == "violation"


def test_module_attr_claim_override(capsys, tmp_path, monkeypatch):
    (tmp_path / "usermech.py").write_text(
        "import numpy as np\nfrom mechanisms import blackbox\n"
        "def f(data, rng, size):\n    return np.sum(data) + rng.laplace(0, 0.5, size)\n"
        "mech = blackbox(f, epsilon=2.0, null_record=0.0, default_pair=([0.0], [1.0]))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, _ = run(capsys, "audit", "usermech:mech", "--epsilon", "1", "--trials", "100000", "--json")
    assert code == 1 and json.loads(out)["claim"]["epsilon"] == 1.0


@pytest.mark.parametrize(
    "argv, words",
    [
        (["audit", "laplace", "--epsilon", "-1"], "epsilon"),
        (["audit", "laplace", "--epsilon", "nan"], "epsilon"),
        (["audit", "laplace", "--epsilon", "inf"], "epsilon"),
        (["audit", "gaussian", "--delta", "1.5"], "delta"),
        (["audit", "laplace", "--trials", "0"], "trials"),
        (["audit", "laplace", "--confidence", "1"], "confidence"),
        (["audit", "no_such_mechanism"], "no mechanism named"),
        (["audit", "no_such_module_xyz:thing"], "Cannot import"),
        (["audit", "laplace", "--param", "nonsense"], "key=value"),
        (["audit", "laplace", "--param", "colour=1"], "no parameter"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_2(capsys, argv, words):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert words in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", [["audit"], ["canary"], ["dpsgd", "--target"]])
def test_a_module_of_the_current_folder_not_on_the_path_is_named_with_the_remedy(capsys, tmp_path, monkeypatch, command):
    (tmp_path / "folder_only_mech.py").write_text("mech = None\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, *command, "folder_only_mech:mech")
    assert code == 2 and "in the current folder" in err and "PYTHONPATH=." in err and len(err.strip().splitlines()) == 1
    monkeypatch.chdir(tmp_path.parent)  # elsewhere the module is not found, and no folder is blamed
    code, _, err = run(capsys, *command, "folder_only_mech:mech")
    assert code == 2 and "No module named" in err and "current folder" not in err


def test_pairs_of_different_lengths_are_refused_under_replace_one():
    from dpaudit.audit import audit_mechanism
    from dpaudit.mechanisms import InvalidParameterError, blackbox

    mech = blackbox(lambda d, rng: float(sum(d)), epsilon=1.0, relation="replace-one")
    with pytest.raises(InvalidParameterError, match="same length"):
        audit_mechanism(mech, [0.0, 1.0], [0.0], trials=100)


def test_list_names_the_mechanisms(capsys):
    code, out, _ = run(capsys, "list", "--json")
    names = {row["name"] for row in json.loads(out)}
    assert code == 0 and {"laplace", "gaussian", "randomized_response"} <= names
