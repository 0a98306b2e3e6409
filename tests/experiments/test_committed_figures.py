"""The committed figures (docs/figures/NAME.json) are what the code gives at their committed seed.

Default run: every experiment has a committed figure and quick-mode JSON;
every figure is at seed 0 and its two-dataset audits carry `interval`; the
deterministic fields (theory curves, expected values, the idealized one-run
bounds) are recomputed and must be equal, number for number; one audit row
is re-run at full settings. The quick-mode JSON is compared whole by the
tests that already run each quick experiment (`test_report_experiments.py`,
`test_fingerprinting_experiment.py`, `test_canary_experiment.py`,
`test_dpsgd_experiment.py`). Slow: every experiment re-run at full settings
and compared whole (`make test-slow`; dpsgd alone takes about half an hour).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.theory.amplification import poisson_subsampled, shuffled_epsilon, smith_subsampled
from dpaudit.audit.theory.composition import kov_epsilon
from dpaudit.audit.theory.conversions import pure_to_rdp, pure_to_zcdp
from dpaudit.audit.theory.upper_bound import upper_bound
from dpaudit.experiments import (
    amplification_sampling,
    amplification_shuffling,
    composition_laplace,
    composition_region,
    experiment_names,
    fingerprinting,
    group_privacy,
    one_run_idealized,
    pure_to_renyi,
    run_experiment,
)
from figure_data import FIGURES, QUICK, as_saved, assert_same, assert_same_as_committed, load

SEED = 0


def figure(name: str) -> dict:
    """Return the committed JSON of experiment `name`."""
    return load(FIGURES / f"{name}.json")


def makefile_figures() -> list[str]:
    """Return the names in the Makefile's FIGURES list (one assignment, continued by backslashes)."""
    lines = (FIGURES.parents[1] / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("FIGURES :="))
    names: list[str] = []
    for line in lines[start:]:
        names += line.removeprefix("FIGURES :=").rstrip("\\").split()
        if not line.endswith("\\"):
            return names
    return names


def two_dataset_audits(value) -> list[dict]:
    """Return every two-dataset audit (a dict with a lower bound of held-out counts) inside `value`."""
    if isinstance(value, list):
        return [audit for item in value for audit in two_dataset_audits(item)]
    if not isinstance(value, dict):
        return []
    own = [value] if "held_out" in value.get("lower_bound", {}) else []
    return own + [audit for item in value.values() for audit in two_dataset_audits(item)]


def test_every_experiment_has_a_committed_figure_and_quick_json():
    names = set(experiment_names())
    assert set(makefile_figures()) == names  # `make figures` makes every one
    assert {p.stem for p in FIGURES.glob("*.json")} == names
    assert {p.stem for p in FIGURES.glob("*.png")} == names
    assert {p.stem for p in QUICK.glob("*.json")} == names


@pytest.mark.parametrize("name", sorted(p.stem for p in FIGURES.glob("*.json")))
def test_committed_figure_is_at_the_committed_seed_with_full_settings(name):
    data = figure(name)
    assert data["seed"] == SEED and data["experiment"] == name and data["figure"] == f"{name}.png"
    assert data.get("quick", False) is False
    assert load(QUICK / f"{name}.json")["seed"] == SEED
    for audit in two_dataset_audits(data):
        assert audit["lower_bound"]["interval"] == "two-rates", audit["mechanism"]


def test_two_dataset_figures_hold_audits():
    # The interval check above is not vacuous: these figures embed two-dataset audits.
    for name in ("amplification-sampling", "amplification-shuffling", "composition-laplace", "composition-region",
                 "group-privacy"):
        assert two_dataset_audits(figure(name)), name


def test_amplification_sampling_theory_and_one_audit_row():
    data = figure("amplification-sampling")
    assert data["qs"] == list(amplification_sampling.QS_FULL)
    for row in data["rows"]:
        assert row["tight"] == poisson_subsampled(epsilon=data["epsilon"], q=row["q"])[0]
        assert row["smith"] == smith_subsampled(epsilon=data["epsilon"], q=row["q"])
    last = data["rows"][-1]
    mech = amplification_sampling.subsampled_rr(epsilon=data["epsilon"], q=last["q"])
    result = audit_mechanism(mech, trials=data["trials"], seed=data["seed"])
    assert_same(as_saved(result.to_dict()), last["audit"], "amplification-sampling.json's last row")


def test_amplification_shuffling_bounds():
    data = figure("amplification-shuffling")
    assert data["ns"] == list(amplification_shuffling.NS_FULL)
    for row in data["rows"]:
        kwargs = {"epsilon0": data["epsilon0"], "num_users": row["num_users"], "delta": data["delta"]}
        assert row["fmt"] == shuffled_epsilon(**kwargs)
        assert row["fmt_paper"] == amplification_shuffling.paper_epsilon(**kwargs)
        assert row["fmt_post"] == amplification_shuffling.post_epsilon(**kwargs)
    for row in data["rows"][:2]:  # the exact ε(δ) of the pair, where its grid is small
        p0, p1, _ = amplification_shuffling.pair_distributions(data["epsilon0"], row["num_users"])
        assert row["exact_pair"] == amplification_shuffling.exact_pair_epsilon(p0, p1, data["delta"])


def test_composition_laplace_theory():
    data = figure("composition-laplace")
    assert data["ks"] == list(composition_laplace.KS_FULL)
    for row in data["rows"]:
        k, eps0 = row["k"], data["epsilon0"]
        mech = composition_laplace.kfold_laplace(epsilon0=eps0, k=k)
        assert row["basic"] == k * eps0
        assert row["pld"] == upper_bound(mech.event, delta=data["delta"], relation="add-remove").epsilon
        assert row["worst_case_probability_d0"] == (math.exp(-eps0) / 2.0) ** k
        assert row["worst_case_probability_d1"] == 0.5**k


def test_composition_region_theory():
    data = figure("composition-region")
    fig3 = data["figure3"]
    assert fig3["curves"] == as_saved(composition_region.figure3_curves(np.array(fig3["total_delta"])))
    assert fig3["optimal_epsilon"] == [
        kov_epsilon(epsilon=fig3["epsilon"], delta=fig3["delta"], k=fig3["k"], target_delta=d)
        for d in fig3["certified_delta"]]
    for key, rows in data["regions"].items():
        for row in rows:
            assert row["optimal_epsilon"] == row["k"] * data["epsilon"]
            assert row["delta_total"] == 1.0 - (1.0 - float(key)) ** row["k"]


def test_group_privacy_theory():
    data = figure("group-privacy")
    assert data["ks"] == list(group_privacy.KS_FULL)
    for row in data["rows"]:
        assert row["group_bound"] == row["k"] * data["epsilon"]
        for key, value in row["worst_event_probability"].items():
            assert value == group_privacy.worst_event_probability(key, epsilon=data["epsilon"], k=row["k"])


def test_pure_to_renyi_theory():
    data = figure("pure-to-renyi")
    assert data["alphas"] == pure_to_renyi.ALPHAS.tolist()
    for panel in data["panels"]:
        eps = panel["epsilon"]
        keep = 1.0 / (1.0 + math.exp(-eps))
        assert panel["rho"] == pure_to_zcdp(epsilon=eps)
        assert panel["bound"] == [pure_to_rdp(epsilon=eps, alpha=float(a)) for a in pure_to_renyi.ALPHAS]
        assert panel["exact_rr"] == pure_to_renyi.bernoulli_renyi(keep, 1.0 - keep, pure_to_renyi.ALPHAS).tolist()
        assert panel["laplace"] == pure_to_renyi.laplace_renyi(eps, pure_to_renyi.ALPHAS).tolist()


def test_fingerprinting_settings_and_expected_errors():
    data = figure("fingerprinting")
    assert data["config"] == as_saved(fingerprinting.FULL)
    for row in data["linf_errors"]:
        expected = fingerprinting.expected_linf_errors(row["dim"], data["config"]["error_rows"], 1.0)
        assert (row["expected_laplace"], row["expected_linf_ball"]) == (expected["laplace"], expected["linf_ball"])
        assert row["harmonic_d"] == fingerprinting.harmonic(row["dim"])


def test_one_run_idealized_bounds():
    data = figure("one-run")
    assert data["best_of_k_unpaid"]["runs"] == one_run_idealized.SIMULATION_RUNS
    assert data["idealized"] == {
        kind: {str(m): [one_run_idealized.idealized_epsilon(kind, e, m) for e in one_run_idealized.EPSILONS]
               for m in one_run_idealized.CANARIES} for kind in one_run_idealized.KINDS}


def test_dpsgd_settings():
    from dpaudit.experiments import dpsgd

    data = figure("dpsgd")
    assert data["config"] == as_saved(dpsgd.FULL)
    for epsilon in dpsgd.FULL["epsilons"]:
        rows = [r for r in data["audits"] if r["epsilon"] == epsilon]
        assert len({r["sigma"] for r in rows}) == 1 and len({r["upper"] for r in rows}) == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.stem for p in FIGURES.glob("*.json")))
def test_full_run_gives_the_committed_figure(name, tmp_path):
    run_experiment(name, tmp_path, seed=figure(name)["seed"])
    assert_same_as_committed(load(tmp_path / f"{name}.json"), FIGURES / f"{name}.json")
