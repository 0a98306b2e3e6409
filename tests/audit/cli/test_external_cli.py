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


LAPLACE = f"{SERVE} {ROOT}/docs/examples/laplace.awk -v epsilon=1"


def test_a_replaced_record_is_refused_with_the_cli_remedies_and_audited_with_them(capsys):
    pair = ["--d0", "[0, 0]", "--d1", "[0, 1]"]
    code, _, err = _run(capsys, "audit", "--command", LAPLACE, "--epsilon", "1", *pair, *TRIALS)
    assert code == 2 and "--relation replace-one" in err and "--null-record" in err
    assert "relation='replace-one'" not in err and "blackbox(" not in err
    for declared in (["--relation", "replace-one"], ["--null-record", "0"]):
        code, out, _ = _run(capsys, "audit", "--command", LAPLACE, "--epsilon", "1", *pair, *declared, "--json", *TRIALS)
        assert code == 0 and json.loads(out)["lower_bound"]["epsilon"] > 0.5  # the sums differ by 1: the program saw each
    code, out, _ = _run(capsys, "audit", "--command", LAPLACE, "--epsilon", "1", "--relation", "replace-one", "--json", *TRIALS)
    assert json.loads(out)["claim"]["relation"] == "replace-one"


def test_the_relation_and_null_record_of_a_built_in_are_its_own(capsys):
    code, _, err = _run(capsys, "audit", "laplace", "--relation", "replace-one", *TRIALS)
    assert code == 2 and "module:attr" in err and len(err.strip().splitlines()) == 1


def test_the_relations_of_the_cli_are_those_of_the_claims():
    from dpaudit.audit.cli.common import RELATIONS
    from dpaudit.mechanisms.base import Relation

    assert RELATIONS == tuple(r.value for r in Relation)


def test_d0_and_d1_may_be_objects_of_columns(capsys, tmp_path, monkeypatch):
    (tmp_path / "column_sum.py").write_text(
        "def noisy_total(data, rng, size):\n"
        "    return sum(data['spend']) + rng.laplace(0.0, 1.0, size)\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, "audit", "--python", sys.executable, "column_sum:noisy_total", "--epsilon", "1",
                        "--d0", '{"spend": [0, 0]}', "--d1", '{"spend": [0, 0, 1]}', "--json", *TRIALS)
    assert code == 0 and json.loads(out)["lower_bound"]["epsilon"] > 0.5
    with pytest.raises(SystemExit):
        main(["audit", "laplace", "--d0", '{"spend": 3}'])


def test_a_null_record_may_be_an_object_of_columns(capsys, tmp_path, monkeypatch):
    """A row given by its columns is read in --d0's column order: the pair below is a neighbour pair only so."""
    (tmp_path / "null_columns.py").write_text(
        "from dpaudit.mechanisms import blackbox\n"
        "def noisy_total(data, rng, size):\n"
        "    return sum(data['spend']) + rng.laplace(0.0, 1.0, size)\n"
        "mech = blackbox(noisy_total, epsilon=1.0)\n")
    monkeypatch.chdir(tmp_path)
    command = ["audit", "--python", sys.executable, "null_columns:noisy_total", "--epsilon", "1"]
    pair = ["--d0", '{"spend": [0.5, 0], "flag": [0, 1]}', "--d1", '{"spend": [0.5, 1], "flag": [0, 0]}']
    code, out, _ = _run(capsys, *command, *pair, "--null-record", '{"flag": 1, "spend": 0}', "--json", *TRIALS)
    assert code == 0 and json.loads(out)["lower_bound"]["epsilon"] > 0.5  # the sums differ by 1: the program saw each
    code, _, err = _run(capsys, *command, "--d0", "[0, 0]", "--d1", "[0, 1]", "--null-record", '{"spend": 0}', *TRIALS)
    assert code == 2 and "objects of the same columns (spend)" in err and len(err.strip().splitlines()) == 1
    monkeypatch.syspath_prepend(str(tmp_path))
    code, _, err = _run(capsys, "canary", "null_columns:mech", "--null-record", '{"spend": 0}', "--runs", "100")
    assert code == 2 and "only a pair of tables has" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("flags", "seconds"), [([], 60.0), (["--timeout", "150"], 150.0), (["--timeout", "2"], 2.0)])
def test_one_batch_may_take_as_long_as_the_timeout(flags, seconds):
    from dpaudit.audit.cli import build_parser
    from dpaudit.audit.cli.common import mechanism_of
    from dpaudit.mechanisms.external.processes import DEFAULT_TIMEOUT

    args = build_parser(["audit"]).parse_args(["audit", "--command", LAPLACE, "--epsilon", "1", *flags])
    assert mechanism_of(args).sampler.timeout == seconds and (flags or seconds == DEFAULT_TIMEOUT)
