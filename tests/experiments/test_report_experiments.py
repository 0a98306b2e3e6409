"""Each experiment's `--quick` run, through the CLI: files written, JSON structure, and the orderings theory demands."""

from __future__ import annotations

import json

import numpy as np
import pytest
from dpaudit.audit.cli import main
from dpaudit.audit.results.tradeoffs import kov_tradeoff
from dpaudit.experiments import experiment_names, get_experiment
from matplotlib.image import imread

MINE = ("composition-region", "amplification-sampling", "composition-laplace", "pure-to-renyi",
        "amplification-shuffling", "group-privacy")
SLACK = 1e-9


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("experiments")


@pytest.fixture(scope="module")
def results(out_dir):
    """Run every experiment once with `dpaudit experiment NAME --quick` and load its JSON."""
    loaded = {}
    for name in MINE:
        assert main(["experiment", name, "--quick", "--seed", "0", "--out", str(out_dir)]) == 0
        loaded[name] = json.loads((out_dir / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def test_registry_lists_every_experiment_and_rejects_unknown(capsys):
    assert set(MINE) <= set(experiment_names())
    assert main(["experiment", "no-such-experiment"]) == 2
    assert "composition-region" in capsys.readouterr().err
    assert main(["experiment"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in MINE)
    assert all(callable(get_experiment(name).run) for name in MINE)


@pytest.mark.parametrize("name", MINE)
def test_writes_png_and_json(results, out_dir, name):
    assert results[name]["experiment"] == name and results[name]["figure"] == f"{name}.png"
    assert (out_dir / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width = imread(out_dir / f"{name}.png").shape[:2]
    assert width >= 700 and height >= 400


def test_composition_region(results):
    data = results["composition-region"]
    assert set(data["regions"]) == {"0", "0.1"}
    for delta_key, rows in data["regions"].items():
        delta = float(delta_key)
        assert [r["k"] for r in rows] == [1, 2, 3, 4, 5]
        for row in rows:
            assert row["rr_certified"] <= row["optimal_epsilon"] + SLACK
            for box in row["rr_boxes"] + row.get("geometric_boxes", []):
                # the true (FPR, FNR) lies on the optimal curve and inside the box, so the corner is above it
                curve = kov_tradeoff(np.array([box["fpr_high"]]), epsilon=data["epsilon"], delta=delta, k=row["k"])
                assert box["fnr_high"] >= curve[0] - SLACK
            if delta == 0.0:
                assert row["geometric_certified"] <= row["optimal_epsilon"] + SLACK
                assert row["rr_audit"]["lower_bound"]["epsilon"] <= row["optimal_epsilon"] + SLACK
        certified = [r["rr_certified"] for r in rows]
        assert certified == sorted(certified)
    fig3 = data["figure3"]
    assert np.all(np.array(fig3["certified_epsilon"]) <= np.array(fig3["optimal_epsilon"]) + SLACK)
    curves = {k: np.array([np.inf if v is None else v for v in vals]) for k, vals in fig3["curves"].items()}
    assert np.all(curves["optimal"] <= curves["kov_closed_form"] + SLACK)
    assert np.all(curves["optimal"] <= curves["advanced"] + SLACK)
    assert np.all(curves["optimal"] <= curves["basic"] + SLACK)


def test_amplification_sampling(results):
    rows = results["amplification-sampling"]["rows"]
    qs = [r["q"] for r in rows]
    assert qs == sorted(qs) and len(qs) >= 3
    for r in rows:
        assert r["certified"] <= r["tight"] + SLACK and r["certified_oracle"] <= r["tight"] + SLACK
        assert r["tight"] <= r["smith"] + SLACK
        assert r["upper_bound"]["epsilon"] == pytest.approx(r["tight"], rel=1e-9)
    oracle = [r["certified_oracle"] for r in rows]
    assert oracle == sorted(oracle)
    assert oracle[-1] >= 0.9 * rows[-1]["tight"]


def test_composition_laplace(results):
    rows = results["composition-laplace"]["rows"]
    for r in rows:
        assert r["pld"] <= r["basic"] + SLACK
        assert r["certified_delta0"] <= r["basic"] + SLACK and r["oracle"]["delta0"] <= r["basic"] + SLACK
        assert r["certified_delta"] <= r["pld"] + 1e-3 and r["oracle"]["delta"] <= r["pld"] + 1e-3
        assert r["oracle"]["delta"] <= r["oracle"]["delta0"] + SLACK
        assert r["worst_case_probability_d0"] < r["worst_case_probability_d1"]
    assert rows[0]["oracle"]["delta0"] >= 0.8 * rows[0]["basic"]


def test_pure_to_renyi(results):
    data = results["pure-to-renyi"]
    n = data["samples_per_dataset"]
    for panel in data["panels"]:
        bound, exact = np.array(panel["bound"]), np.array(panel["exact_rr"])
        assert np.allclose(bound, exact, rtol=1e-9, atol=1e-12)
        assert np.all(np.array(panel["certified"]) <= exact + SLACK)
        assert np.all(np.array(panel["laplace"]) <= bound + SLACK)
        assert np.all(np.diff(bound) >= -SLACK) and np.all(bound <= panel["epsilon"] + SLACK)
        # plug-in error of two frequencies of n samples, at 6 standard errors, on the log-ratio scale
        tolerance = 6 * 2 / np.sqrt(n * 0.1)
        assert np.all(np.abs(np.array(panel["plug_in"]) - exact) <= tolerance)


def test_amplification_shuffling(results):
    data = results["amplification-shuffling"]
    rows = data["rows"]
    for r in rows:
        assert r["certified_oracle"] <= r["exact_pair"] + SLACK
        assert r["certified"] <= r["exact_pair"] + SLACK
        assert r["exact_pair"] <= r["fmt"] + SLACK <= data["epsilon0"] + 2 * SLACK
        assert r["fmt_paper"] <= r["fmt"] + SLACK and r["fmt"] <= r["fmt_post"] + SLACK
    fmt = [r["fmt"] for r in rows]
    assert fmt == sorted(fmt, reverse=True)


def test_group_privacy(results):
    rows = results["group-privacy"]["rows"]
    for r in rows:
        for key in ("laplace", "randomized_response"):
            assert r[key]["certified"] <= r["group_bound"] + SLACK
            assert r[key]["upper_bound"]["epsilon"] == pytest.approx(r["group_bound"], rel=1e-9)
            assert r[key]["certified"] >= 0.8 * r["group_bound"]
