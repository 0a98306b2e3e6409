"""What the CLI keeps whatever happens: clean JSON when user code prints, output places checked before any work,
the verdict's exit status when a write fails after it, the suite's finished rows on Ctrl-C, and one clear sentence."""

import json
import re
import sys
from pathlib import Path

import pytest
from dpaudit.audit.cli import main

USER_CODE = '''
import numpy as np
from dpaudit.mechanisms import Claim, blackbox
from dpaudit.mechanisms.records import VectorRecords

def _chatty_vector(data, rng, size):
    print("debug: vector batch", size)
    return rng.normal(0.0, 1.0, (size, 4))

def _chatty_marginals(data, rng, size):
    print("debug: marginals batch", size)
    return rng.normal(0.0, 1.0, (size, np.asarray(data).shape[1]))

def _leak(data, rng, size):
    return np.sum(data) + rng.laplace(0.0, 0.05, size)

vectors = blackbox(_chatty_vector, epsilon=1.0, records=VectorRecords(width=4), null_record=0.0,
                   default_pair=([[0.0] * 4], [[0.0] * 4, [1.0] * 4]))
marginals = blackbox(_chatty_marginals, epsilon=1.0, relation="replace-one")
leak = blackbox(_leak, epsilon=1.0, default_pair=([0.0], [0.0, 1.0]))
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "reliability_mechs.py").write_text(USER_CODE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "reliability_mechs"
    sys.modules.pop("reliability_mechs", None)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_sentence(err: str) -> bool:
    return "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [
    ["canary", "{m}:vectors", "--runs", "400"],
    ["one-run", "{m}:vectors", "--canaries", "50"],
    ["trace", "{m}:marginals", "--rows", "10", "--dim", "20", "--runs", "200"],
])
def test_what_user_code_prints_goes_to_stderr_and_the_json_stays_whole(capsys, user_module, argv):
    code, out, err = run(capsys, *[a.format(m=user_module) for a in argv], "--json", "--quiet")
    assert code == 0 and json.loads(out)["verdict"] == "consistent" and "debug:" in err and "debug:" not in out


def test_a_dpsgd_loop_that_prints_leaves_the_json_whole(capsys, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    (tmp_path / "printing_loop.py").write_text(
        "import numpy as np\nfrom dpaudit.audit import UserTrainer\nfrom dpaudit.mechanisms import Claim\n"
        "def train(x, y, rng):\n    print('epoch done')\n    return rng.normal(size=(3, 12))\n"
        "target = UserTrainer(train=train, losses=lambda w, x, y: np.zeros(len(y)), x=np.eye(6), y=np.arange(6) % 2,"
        " claim=Claim(1.0, 1e-5))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = run(capsys, "dpsgd", "--target", "printing_loop:target", "--canary", "crafted", "--runs", "10",
                         "--json", "--quiet")
    assert code == 0 and json.loads(out)["verdict"] == "consistent" and "epoch done" in err


@pytest.mark.parametrize("flag, name", [("--save", "scores.npz"), ("--report", "report.html")])
def test_a_folder_where_a_file_is_expected_is_refused_before_any_work(capsys, user_module, tmp_path, flag, name):
    (tmp_path / name).mkdir()
    code, out, err = run(capsys, "canary", f"{user_module}:vectors", "--runs", "400", flag, str(tmp_path / name), "--quiet")
    assert code == 2 and one_sentence(err) and "is a folder" in err and out == ""


def test_a_file_where_a_folder_is_expected_is_refused_before_any_work(capsys, tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("")
    code, _, err = run(capsys, "suite", "--only", "laplace", "--out", str(blocker), "--quiet")
    assert code == 2 and one_sentence(err) and "needs a folder" in err and "is a file" in err
    code, _, err = run(capsys, "experiment", "group-privacy", "--quick", "--out", str(blocker / "sub"))
    assert code == 2 and one_sentence(err) and "is a file, not a folder" in err


def test_a_certified_violation_keeps_exit_1_when_a_write_fails_after_it(capsys, user_module, tmp_path, monkeypatch):
    from dpaudit.attacks.observations import Observations

    def full_disk(self, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Observations, "save", full_disk)
    monkeypatch.setattr("tempfile.gettempdir", lambda: str(tmp_path))
    code, out, err = run(capsys, "canary", f"{user_module}:leak", "--runs", "2000", "--save", str(tmp_path / "s.npz"),
                         "--json", "--quiet")
    assert code == 1 and json.loads(out)["verdict"] == "violation" and "No space left" in err


def test_scores_that_cannot_be_saved_where_asked_are_kept_elsewhere(capsys, user_module, tmp_path, monkeypatch):
    from dpaudit.attacks.observations import Observations

    real_save = Observations.save

    def refuses_the_target(self, path):
        if Path(path).parent == tmp_path:
            raise OSError(13, "Permission denied")
        return real_save(self, path)

    monkeypatch.setattr(Observations, "save", refuses_the_target)
    code, _, err = run(capsys, "canary", f"{user_module}:vectors", "--runs", "400", "--save", str(tmp_path / "s.npz"), "--quiet")
    kept = re.search(r"the scores are in (\S+)\.$", err.strip()).group(1)
    assert code == 2 and Observations.load(kept).size == 400


def test_an_interrupted_suite_prints_the_rows_it_finished(capsys, monkeypatch):
    import dpaudit.audit.audits.suite as suite

    real = suite.audit_mechanism
    calls = {"n": 0}

    def second_one_interrupted(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **{**kwargs, "trials": 20_000})

    monkeypatch.setattr(suite, "audit_mechanism", second_one_interrupted)
    code, out, err = run(capsys, "suite", "--only", "laplace*", "--json", "--quiet")
    rows = json.loads(out)
    assert code == 130 and len(rows) == 1 and rows[0]["mechanism"] == "laplace" and "interrupted after 1 of" in err


def test_budget_flags_with_a_fixed_trial_count_are_refused(capsys):
    code, _, err = run(capsys, "audit", "laplace", "--trials", "1000", "--max-seconds", "5")
    assert code == 2 and one_sentence(err) and "--max-seconds" in err and "--trials auto" in err


def test_a_dataset_a_users_loop_cannot_train_on_names_the_choices(capsys, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[3] / "docs" / "examples"))
    code, _, err = run(capsys, "dpsgd", "--target", "numpy_dpsgd:target", "--data", "digits", "--runs", "10")
    assert code == 2 and one_sentence(err) and all(w in err for w in ("'user'", "'canaries'", "int k"))


def test_the_theory_guide_shows_what_bounds_compose_prints(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    readme = (Path(__file__).resolve().parents[3] / "docs" / "guides" / "theory.md").read_text()
    shown = readme.split("$ dpaudit bounds compose --epsilon 0.1 --k 100 --delta 1e-5\n", 1)[1].split("```", 1)[0]
    code, out, _ = run(capsys, "bounds", "compose", "--epsilon", "0.1", "--k", "100", "--delta", "1e-5")
    assert code == 0 and [line.rstrip() for line in out.strip("\n").splitlines()] == [
        line.rstrip() for line in shown.strip("\n").splitlines()]


def test_a_bad_neighbour_answer_is_exit_2_and_one_sentence(capsys, tmp_path, monkeypatch):
    (tmp_path / "odd_check.py").write_text(
        "import numpy as np\nfrom dpaudit.mechanisms import blackbox\n"
        "mech = blackbox(lambda d, rng, size: rng.laplace(size=size), epsilon=1.0, neighbours=lambda a, b: 1,"
        " default_pair=([0.0], [1.0]))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, _, err = run(capsys, "audit", "odd_check:mech", "--trials", "1000")
    assert code == 2 and one_sentence(err) and "must answer True/False, None or a sentence" in err
