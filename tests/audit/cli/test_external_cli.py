"""`dpaudit audit --command` and `--python`: mechanisms outside this Python, with the usual verdicts and exit statuses."""

import json
import sys
from pathlib import Path

import pytest
from dpaudit.audit.cli import main

ROOT = Path(__file__).resolve().parents[3]
SERVE = f"sh {ROOT}/docs/examples/serve.sh"
TRIALS = ["--trials", "200000", "--seed", "0", "--quiet"]


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_correct_awk_mechanism_is_consistent_and_a_buggy_one_a_violation(capsys):
    code, out, _ = _run(capsys, "audit", "--command", f"{SERVE} {ROOT}/docs/examples/laplace.awk -v epsilon=1",
                        "--epsilon", "1", "--json", *TRIALS)
    assert code == 0 and json.loads(out)["verdict"] == "consistent"
    code, out, _ = _run(capsys, "audit", "--command", f"{SERVE} {ROOT}/docs/examples/laplace.awk -v epsilon=1 -v sensitivity=0.5",
                        "--epsilon", "1", "--json", *TRIALS)
    assert code == 1 and json.loads(out)["lower_bound"]["epsilon"] > 1.0


def test_a_python_module_run_by_another_interpreter_is_audited(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = _run(capsys, "audit", "--python", sys.executable, "docs.examples.other_env_mechanism:laplace_sum",
                        "--epsilon", "1", "--json", *TRIALS)
    assert code == 0 and json.loads(out)["verdict"] == "consistent"


@pytest.mark.parametrize(("argv", "status", "words"), [
    (["--command", "no-such-program-here", "--epsilon", "1"], 2, "cannot be run"),
    (["--command", "sh -c 'exit 3'", "--epsilon", "1"], 3, "exited with status 3"),
    (["--command", "sh -c 'echo garbage; cat'", "--epsilon", "1"], 3, "garbage"),
    (["--command", "cat"], 2, "needs --epsilon"),
    (["laplace", "--command", "cat", "--epsilon", "1"], 2, "not both"),
    (["--python", sys.executable, "laplace", "--epsilon", "1"], 2, "module:attr"),
    ([], 2, "Name the mechanism"),
])
def test_bad_external_input_or_a_crash_is_one_sentence(capsys, argv, status, words):
    code, _, err = _run(capsys, "audit", *argv, "--trials", "1000", "--quiet")
    assert code == status and words in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_pair_comes_from_d0_and_d1(capsys):
    code, out, _ = _run(capsys, "audit", "--command", f"{SERVE} {ROOT}/docs/examples/laplace.awk -v epsilon=1",
                        "--epsilon", "1", "--d0", "[0, 0]", "--d1", "[0, 0, 0.1]", "--json", *TRIALS)
    assert code == 0 and json.loads(out)["lower_bound"]["epsilon"] < 0.2  # a sum 0.1 apart, not the default pair 1 apart
    with pytest.raises(SystemExit):
        main(["audit", "laplace", "--d0", "not json"])
