"""`dpaudit experiment fingerprinting --quick`: the four parts are written, and their shapes are the paper's."""

import json
import math

from dpaudit.attacks.observations import Observations
from dpaudit.audit.cli import main


def test_quick_experiment_writes_figure_and_json(tmp_path):
    assert main(["experiment", "fingerprinting", "--quick", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "fingerprinting.json").read_text())
    assert (tmp_path / "fingerprinting.png").stat().st_size > 0
    known = data["exact_release"][0]
    assert known["score"] == "known" and known["tpr_at_1pct_fpr"] > 0.2
    sweep = data["accuracy_sweep"]
    assert sweep[0]["tpr_at_1pct_fpr"] > sweep[-1]["tpr_at_1pct_fpr"]
    assert all(max(r["certified_per_seed"]) <= r["claim"] for r in data["dp_mechanisms"])
    errors = data["linf_errors"]
    assert all(r["laplace"] > r["linf_ball"] for r in errors)
    # Laplace's ℓ∞ error over the ball's is about H_d ≈ ln d + 0.58: within a factor 1.5 of ln d from d = 100.
    assert all(math.log(r["dim"]) / 1.5 < r["ratio"] < 1.5 * math.log(r["dim"]) + 1 for r in errors if r["dim"] >= 100)


def test_tpr_at_fpr_counts_members_above_the_non_member_quantile():
    obs = Observations.from_in_out([5.0, 6.0, 0.5, -1.0], list(range(100)))
    assert obs.tpr_at(0.01) == 0.0
    obs = Observations.from_in_out([500.0, 600.0, 0.5, -1.0], list(range(100)))
    assert obs.tpr_at(0.01) == 0.5
    assert math.isnan(Observations.from_in_out([1.0], []).tpr_at(0.01))
