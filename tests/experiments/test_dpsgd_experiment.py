"""`dpaudit experiment dpsgd --quick`: every (threat, game, estimator) row is written, below its PLD bound."""

import json

import pytest
from dpaudit.audit.cli import main
from dpaudit.experiments.dpsgd import calibrate
from dpaudit.mechanisms.dpsgd.accounting import pld_epsilon, poisson_event
from figure_data import QUICK, assert_same_as_committed

pytest.importorskip("torch")


def test_calibrated_sigma_gives_the_target_epsilon():
    sigma = calibrate(4.0, 50)
    assert pld_epsilon(poisson_event(sigma, 256 / 1797, 50), 1e-5) == pytest.approx(4.0, abs=0.01)


def test_quick_experiment_writes_figure_and_json(tmp_path):
    assert main(["experiment", "dpsgd", "--quick", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "dpsgd.json").read_text())
    assert (tmp_path / "dpsgd.png").stat().st_size > 0
    assert_same_as_committed(data, QUICK / "dpsgd.json")
    combos = {(r["game"], r["threat"], r["estimator"]) for r in data["audits"]}
    assert len(combos) == 8
    assert all(0 <= r["certified"] <= r["upper"] for r in data["audits"])
    assert {r["training_runs"] for r in data["audits"] if r["game"] == "one-run"} == {1}
