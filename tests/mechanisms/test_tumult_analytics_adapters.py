"""Tumult Analytics adapters: registered only when Analytics' environment exists; claims from the Session, audits as expected.

The registration tests, and those of dpaudit's own reading of Analytics'
noise lists, need no Analytics. The others run Tumult Analytics in
its environment `tumult-analytics` (`make tumult-analytics`) and are skipped without
it (CI does not build it: `make test-tumult` runs them). Tumult draws from
its own unseeded generator, so outputs differ between runs: the audits of
correct queries use confidence 0.999 (a correct one is flagged with
probability at most 0.001, whatever the draws), and every law check has a
tolerance of at least 5 standard errors at its sample size. The mechanisms
are built once per module (a fixture) and share one Analytics process,
which starts Spark once (about a minute with the first Session).
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from dpaudit.audit.audits.two_dataset import audit_mechanism
from dpaudit.audit.theory import upper_bound
from dpaudit.mechanisms import InvalidParameterError, MechanismError, get_mechanism
from dpaudit.mechanisms.adapters import tumult_analytics as taa
from dpaudit.mechanisms.adapters.tumult_core import one_row_added
from dpaudit.mechanisms.builtins.floating_point import from_bits
from dpaudit.mechanisms.builtins.statistics import present_records
from dpaudit.mechanisms.environments import ENVIRONMENTS, environment_dir
from dpaudit.mechanisms.outputs import NONFINITE
from dpaudit.mechanisms.registry import registration
from fresh_registry import registered

CORRECT = ["tumult_analytics_average", "tumult_analytics_average_zcdp", "tumult_analytics_count", "tumult_analytics_count_zcdp",
           "tumult_analytics_grouped_count", "tumult_analytics_grouped_count_zcdp", "tumult_analytics_quantile",
           "tumult_analytics_quantile_zcdp", "tumult_analytics_sum", "tumult_analytics_sum_zcdp"]
BUGGY = ["tumult_analytics_average_duplicated_rows", "tumult_analytics_average_zcdp_duplicated_rows",
         "tumult_analytics_count_duplicated_rows", "tumult_analytics_count_zcdp_duplicated_rows",
         "tumult_analytics_grouped_count_private_keys", "tumult_analytics_grouped_count_zcdp_private_keys",
         "tumult_analytics_quantile_budget_too_large", "tumult_analytics_quantile_zcdp_duplicated_rows",
         "tumult_analytics_sum_budget_too_large", "tumult_analytics_sum_zcdp_bits", "tumult_analytics_sum_zcdp_budget_too_large"]
NAMES = sorted(CORRECT + BUGGY)
ABSENT = "Tumult Analytics' environment is absent: run `dpaudit env create tumult-analytics` (or `make tumult-analytics`)"
RHO, DELTA = 1 / 32, 1e-5
# Trials of the buggy audits: 10,000, or 5,000 for the quantiles (about 5 ms an output); 20,000 for the low bits, where the
# selection phase must learn which low bits only one sum gives (as for tumult_gaussian_sum_bits).
TRIALS = {"tumult_analytics_quantile_budget_too_large": 5000, "tumult_analytics_quantile_zcdp_duplicated_rows": 5000,
          "tumult_analytics_sum_zcdp_bits": 20_000}
BUN_STEINKE = RHO + 2 * math.sqrt(RHO * math.log(1 / DELTA))  # Tumult's conversion of ρ = 1/32 at δ = 1e-5: 1.2309

LISTED = """
from dpaudit.mechanisms import list_mechanisms
print(" ".join(n for n in list_mechanisms() if n.startswith("tumult_analytics_")))
"""


def _registered(value: str | None) -> list[str]:
    """Return the tumult_analytics_* names a fresh process registers with the variable set to `value` (unset: None)."""
    return registered(LISTED, taa.ENVIRONMENT_VARIABLE, value)


# ---- registration and dpaudit's side: no Analytics needed


def test_nothing_is_registered_when_the_variable_points_nowhere(tmp_path) -> None:
    assert _registered(str(tmp_path / "no-such-python")) == []


def test_every_adapter_is_registered_for_a_runnable_interpreter_and_registering_runs_nothing() -> None:
    # dpaudit's own interpreter has no Analytics: registering must not run it, only building a mechanism does.
    assert _registered(sys.executable) == NAMES


def test_the_interpreter_is_that_of_its_own_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(taa.ENVIRONMENT_VARIABLE, raising=False)
    assert taa.tumult_analytics_python() is None  # not built: never built by the lookup
    fake = environment_dir("tumult-analytics") / "bin" / "python"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\n")
    assert taa.tumult_analytics_python() == str(fake)
    assert ENVIRONMENTS["tumult-analytics"].needs == ("java",) and environment_dir("tumult-core") != fake.parent.parent
    monkeypatch.setenv(taa.ENVIRONMENT_VARIABLE, "")
    assert taa.tumult_analytics_python() is None  # set: no fallback to the environment


def test_building_without_the_environment_is_one_sentence(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(taa.ENVIRONMENT_VARIABLE, str(tmp_path / "nowhere"))
    with pytest.raises(InvalidParameterError, match="dpaudit env create tumult-analytics"):
        taa.tumult_analytics_count()


@pytest.mark.parametrize("build", [lambda: taa.tumult_analytics_count(epsilon=0.0), lambda: taa.tumult_analytics_sum_zcdp(delta=1.0),
                                   lambda: taa.tumult_analytics_average(lower=1.0, upper=-1.0),
                                   lambda: taa.tumult_analytics_quantile(quantile=1.5),
                                   lambda: taa.tumult_analytics_grouped_count(groups=0),
                                   lambda: taa.tumult_analytics_count_duplicated_rows(rows_per_record=1),
                                   lambda: taa.tumult_analytics_sum_budget_too_large(budget_factor=0.5)])
def test_bad_parameters_are_refused_before_analytics_runs(build, monkeypatch) -> None:
    monkeypatch.setenv(taa.ENVIRONMENT_VARIABLE, sys.executable)  # would fail if run: the check must come first
    with pytest.raises(InvalidParameterError):
        build()


def test_noise_lists_become_dpaudits_events() -> None:
    """The average at [−2, 1], ε = 1: Laplace 3 on the sum of deviations (Δ 1.5), Laplace 2 on the count: ε/2 each."""
    average = taa._events([1.5, 1.0])([{"mechanism": "LAPLACE", "parameter": 3.0}, {"mechanism": "LAPLACE", "parameter": 2.0}])
    assert upper_bound(average, delta=0.0).epsilon == pytest.approx(1.0)
    count = taa._events([2])([{"mechanism": "GEOMETRIC", "parameter": 1.0}])  # two rows a record: 2ε
    assert upper_bound(count, delta=0.0).epsilon == pytest.approx(2.0)
    gaussian = taa._events([1.5, 1.0])([{"mechanism": "GAUSSIAN", "parameter": 72.0}, {"mechanism": "GAUSSIAN", "parameter": 32.0}])
    single = upper_bound(taa._events([1.0])([{"mechanism": "GAUSSIAN", "parameter": 16.0}]), delta=DELTA).epsilon
    assert upper_bound(gaussian, delta=DELTA).epsilon == pytest.approx(single)  # μ² = 1/32 + 1/32 = 1/16: σ = 4
    quantile = taa._exponential(12)([{"mechanism": "EXPONENTIAL", "parameter": 0.5}])
    assert upper_bound(quantile, delta=0.0).epsilon == pytest.approx(6.0)  # group privacy, 12 rows a record
    with pytest.raises(MechanismError, match="no analysis"):
        taa._events([1.0])([{"mechanism": "STAIRCASE", "parameter": 1.0}])
    with pytest.raises(MechanismError, match="2 noise draws"):
        taa._events([1.0])([{"mechanism": "LAPLACE", "parameter": 1.0}] * 2)


@pytest.mark.parametrize("pair", [taa._average_pair({"lower": -2.0, "upper": 1.0}), taa._quantile_pair({"lower": -2.0, "upper": 1.0}),
                                  one_row_added(-0.5, -2.0)])
def test_default_pairs_are_one_record_added(pair) -> None:
    assert present_records(-np.inf, np.inf)(*pair) is None


def test_the_grouped_pair_adds_the_only_record_of_the_last_group() -> None:
    d0, d1 = taa._grouped_pair(3)
    assert present_records(0.0, 2.0)(d0, d1) is None
    assert 2.0 not in d0 and list(d1).count(2.0) == 1
    assert present_records(0.0, 0.0)(*taa._grouped_pair(1)) is None


# ---- Tumult Analytics itself


@pytest.fixture(scope="module")
def mechanisms():
    """Every adapter at its default parameters, built once for the module's tests (one Analytics process for all)."""
    if taa.tumult_analytics_python() is None:
        pytest.skip(ABSENT)
    mechs = {name: get_mechanism(name) for name in NAMES}
    yield mechs
    mechs[NAMES[0]].close()


def test_claims_are_the_sessions_budgets(mechanisms) -> None:
    for name in NAMES:
        mech = mechanisms[name]
        assert (registration(name).expected == "violation") == (name in BUGGY) and mech.params["tmlt_analytics"] == "0.21.0"
        if "zcdp" in name:
            assert mech.claim.epsilon == pytest.approx(BUN_STEINKE, rel=1e-12) and mech.claim.delta == DELTA and mech.params["rho"] == RHO
        else:
            assert (mech.claim.epsilon, mech.claim.delta) == (1.0, 0.0)
    assert mechanisms["tumult_analytics_sum_budget_too_large"].params["session_budget"] == {"PureDPBudget": 2.0}
    assert mechanisms["tumult_analytics_sum_zcdp_budget_too_large"].params["session_budget"] == {"RhoZCDPBudget": 0.5}


def test_noise_is_calibrated_as_documented(mechanisms) -> None:
    noise = {name: mechanisms[name].params["noise"] for name in CORRECT}
    assert noise["tumult_analytics_count"] == ["GEOMETRIC(1)"] and noise["tumult_analytics_count_zcdp"] == ["DISCRETE_GAUSSIAN(16)"]
    assert noise["tumult_analytics_sum"] == ["LAPLACE(2)"] and noise["tumult_analytics_sum_zcdp"] == ["GAUSSIAN(64)"]
    assert noise["tumult_analytics_average"] == ["LAPLACE(3)", "LAPLACE(2)"]  # (upper − lower)/2 over ε/2; 1 over ε/2
    assert noise["tumult_analytics_quantile"] == ["EXPONENTIAL(1)"] and noise["tumult_analytics_quantile_zcdp"] == ["EXPONENTIAL(0.5)"]
    assert mechanisms["tumult_analytics_sum_zcdp_budget_too_large"].params["noise"] == ["GAUSSIAN(4)"]  # 16 ρ: σ² = 64/16


def test_count_and_sum_have_the_calibrated_laws(mechanisms) -> None:
    rng = np.random.default_rng(0)
    n = 2000
    out = mechanisms["tumult_analytics_count"].sample(np.array([np.nan, 1.0, 5.0, -2.0]), n, rng)  # three records
    q = math.exp(-1.0)
    var = 2 * q / (1 - q) ** 2  # two-sided geometric at α = 1: 1.84
    assert out.dtype == np.int64 and abs(out.mean() - 3) < 5 * math.sqrt(var / n)
    doubled = mechanisms["tumult_analytics_count_duplicated_rows"].sample(np.array([np.nan, 1.0, 5.0, -2.0]), n, rng)
    assert abs(doubled.mean() - 6) < 5 * math.sqrt(var / n)  # each record two rows
    out = mechanisms["tumult_analytics_sum"].sample(np.array([5.0, -0.5, -7.0]), n, rng)
    # clamped to [−2, 1]: 1 − 0.5 − 2 = −1.5, Laplace(2) noise of deviation 2√2.
    assert abs(out.mean() + 1.5) < 5 * 2 * math.sqrt(2) / math.sqrt(n)


def test_gaussian_sum_bits_differ_in_support(mechanisms) -> None:
    """Sums −2 and −4 (σ = 8): outputs in (−1, 1) are −2 + noise, often off the grid 2^-51, or −4 + noise, exact (Sterbenz)."""
    mech = mechanisms["tumult_analytics_sum_zcdp_bits"]
    rng = np.random.default_rng(3)
    off = []
    for data in mech.default_pair:
        out = from_bits(mech.sample(data, 3000, rng))
        small = out[np.abs(out) < 1.0]
        off.append(int(np.sum(np.mod(small, 2.0**-51) != 0)))
    # P(|−2 + noise| < 1) = 0.098 at σ = 8, and about a quarter of those are odd multiples of 2^-52: about 75 expected
    # of 3,000; fewer than 20 has probability below 1e-12.
    assert off[0] > 20 and off[1] == 0


def test_grouped_counts_count_each_group_and_private_keys_drop_absent_groups(mechanisms) -> None:
    rng = np.random.default_rng(1)
    n = 2000
    data = np.array([0.0, 0.0, 1.0, np.nan])
    out = mechanisms["tumult_analytics_grouped_count"].sample(data, n, rng)
    assert out.shape == (n, 3) and np.all(np.abs(out.mean(axis=0) - [2, 1, 0]) < 5 * math.sqrt(1.84 / n))
    private = mechanisms["tumult_analytics_grouped_count_private_keys"].sample(data, 50, rng)
    assert np.all(np.abs(private[:, :2]) < 100) and np.all(private[:, 2] == NONFINITE)  # group 2 has no key: nan, mapped
    with pytest.raises(Exception, match="group labels"):
        mechanisms["tumult_analytics_grouped_count"].sample(np.array([0.5]), 10, rng)


def test_the_quantile_is_uniform_on_one_record_at_the_lower_bound(mechanisms) -> None:
    """On {lower}, Tumult's exponential mechanism has one interval, [−2, 1]: uniform, mean −0.5, deviation 3/√12."""
    n = 1000
    out = mechanisms["tumult_analytics_quantile"].sample(taa._quantile_pair({"lower": -2.0, "upper": 1.0})[0], n, np.random.default_rng(2))
    assert np.all((out >= -2.0) & (out <= 1.0)) and abs(out.mean() + 0.5) < 5 * (3 / math.sqrt(12)) / math.sqrt(n)


@pytest.mark.slow
@pytest.mark.parametrize("name", CORRECT)
def test_correct_queries_are_not_flagged(mechanisms, name: str) -> None:
    mech = mechanisms[name]
    result = audit_mechanism(mech, trials=5000, seed=0, confidence=0.999)
    assert result.verdict == "consistent"
    assert result.upper_bound.epsilon <= mech.claim.epsilon + 1e-9  # Analytics' noise is at least what its budget needs


@pytest.mark.slow
@pytest.mark.parametrize("name", BUGGY)
def test_buggy_queries_are_flagged(mechanisms, name: str) -> None:
    mech = mechanisms[name]
    result = audit_mechanism(mech, trials=TRIALS.get(name, 10_000), seed=0, confidence=0.95)
    assert result.verdict == "violation"
    assert result.upper_bound.epsilon > mech.claim.epsilon  # dpaudit's own analysis of the noise listed sees the bug too

