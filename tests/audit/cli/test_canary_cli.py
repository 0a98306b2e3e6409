"""`dpaudit canary` and `dpaudit one-run`: saved-scores round trip, mechanisms by name, exit statuses."""

import json

import numpy as np
import pytest
from dpaudit.attacks.games import OneRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit import Bound, audit_scores
from dpaudit.audit.cli import main


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def _separated_scores(seed: int, n: int = 2000, shift: float = 3.0) -> Observations:
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.5
    return Observations(scores=rng.normal(size=n) + shift * truth, truth=truth)


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_one_run_on_saved_scores_matches_the_python_api(tmp_path, capsys, suffix):
    obs = _separated_scores(0)
    path = obs.save(tmp_path / f"scores{suffix}")
    status = main(["one-run", "--scores", str(path), "--at-delta", "1e-5", "--json", "--k-plus", "100",
                   "--k-minus", "100"])
    data = _json(capsys)
    expected = audit_scores(Observations.load(path), game=OneRun(None, guesses=(100, 100)),
                            bound=Bound("one-run", delta=1e-5))
    assert status == 0 and data["verdict"] is None
    assert data["lower_bound"]["epsilon"] == pytest.approx(expected.lower_bound.epsilon)
    assert data["canaries"] == 2000 and data["guesses"] == 200 and data["game"] == "one-run"
    assert data["lower_bound"]["epsilon"] > 1.0  # a 3-sd shift: 200 extreme guesses are nearly all right


def test_saved_scores_against_a_claim_give_exit_status_one(tmp_path, capsys):
    path = _separated_scores(1).save(tmp_path / "scores.json")
    assert main(["canary", "--scores", str(path), "--epsilon", "0.5", "--json"]) == 1
    data = _json(capsys)
    assert data["verdict"] == "violation" and data["estimator"] == "dominating-pair"
    assert data["lower_bound"]["epsilon"] > 0.5


def test_gdp_estimators_on_saved_scores_are_labelled(tmp_path, capsys):
    path = _separated_scores(2, shift=1.0).save(tmp_path / "scores.npz")
    assert main(["one-run", "--scores", str(path), "--estimator", "one-run-fdp", "--delta", "1e-5",
                 "--epsilon", "100", "--json"]) == 0
    data = _json(capsys)
    assert "Gaussian" in data["assumption"] and data["verdict"] == "consistent"


def test_mechanism_by_name_and_by_module_attr(capsys):
    assert main(["one-run", "canary_mean_noise_divided_twice", "--canaries", "300", "--json"]) == 1
    assert _json(capsys)["verdict"] == "violation"
    assert main(["canary", "dpaudit.mechanisms.builtins.canary_targets:canary_gaussian_sum", "--param", "epsilon=8.0",
                 "--epsilon", "8", "--runs", "2000", "--dim", "50", "--json"]) == 0
    data = _json(capsys)
    assert data["mechanism"] == "canary_gaussian_sum" and data["claim"]["epsilon"] == 8.0
    assert 0.0 < data["lower_bound"]["epsilon"] <= 8.0


def test_bad_input_exits_two(tmp_path, capsys):
    assert main(["one-run"]) == 2
    assert main(["canary", "laplace", "--scores", "x.json"]) == 2
    assert main(["one-run", "--scores", str(tmp_path / "missing.json")]) == 2
    assert main(["canary", "--scores", str(tmp_path / "missing.json"), "--estimator", "gdp"]) == 2
    assert "error" in capsys.readouterr().err


def test_saved_game_scores_re_audit_to_the_same_bound(tmp_path, capsys):
    path = tmp_path / "game.npz"
    assert main(["one-run", "canary_gaussian_sum", "--epsilon", "4", "--canaries", "400", "--seed", "5",
                 "--save", str(path), "--json"]) == 0
    first = _json(capsys)
    assert main(["one-run", "--scores", str(path), "--at-delta", "1e-5", "--seed", "5", "--json"]) == 0
    again = _json(capsys)
    assert again["lower_bound"]["epsilon"] == first["lower_bound"]["epsilon"]
    assert again["correct"] == first["correct"] and again["canaries"] == 400
