"""`dpaudit experiment fingerprinting --quick`: the four parts are written, and their shapes are the paper's.

The ℓ∞ errors of the docstring are checked against simulations of the
mechanisms themselves, within Z standard errors of the sample size (fixed
seeds; a correct formula fails with probability below 6·10⁻⁷ per check).
"""

import json
import math

import numpy as np
import pytest
from dpaudit.attacks.observations import Observations
from dpaudit.audit.cli import main
from dpaudit.experiments.fingerprinting import expected_linf_errors, harmonic
from dpaudit.mechanisms.builtins.marginals import marginals_laplace, marginals_linf

Z = 5.0
SEED = 20150


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
    assert all(r["harmonic_d"] == harmonic(r["dim"]) for r in errors)


def test_tpr_at_fpr_counts_members_above_the_non_member_quantile():
    obs = Observations.from_in_out([5.0, 6.0, 0.5, -1.0], list(range(100)))
    assert obs.tpr_at(0.01) == 0.0
    obs = Observations.from_in_out([500.0, 600.0, 0.5, -1.0], list(range(100)))
    assert obs.tpr_at(0.01) == 0.5
    assert math.isnan(Observations.from_in_out([1.0], []).tpr_at(0.01))


def test_harmonic_numbers():
    assert harmonic(1) == 1.0 and harmonic(4) == pytest.approx(25 / 12, rel=1e-15)
    # H_d − ln d decreases to Euler's γ = 0.5772…, from above, within 1/(2d).
    for d in (10, 1000, 100_000):
        assert 0.0 < harmonic(d) - math.log(d) - 0.5772156649015329 < 1 / (2 * d)


def _linf_errors(factory, d: int, n: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Return `draws` ℓ∞ errors of the marginals of n rows of +1 released by `factory` (ε = 1)."""
    data = np.ones((n, d), dtype=np.int8)
    return np.max(np.abs(factory(epsilon=1.0, num_rows=n, dim=d).sample(data, draws, rng) - 1.0), axis=1)


def _mean_and_se(errors: np.ndarray) -> tuple[float, float]:
    return float(errors.mean()), float(errors.std(ddof=1) / math.sqrt(len(errors)))


def test_linf_ball_error_is_2d_over_n_epsilon_not_2_d_plus_1():
    # The check: 200,000 draws at d = 10, n = 100, ε = 1 give 0.2001 ± 0.00014; 2(d + 1)/(nε) = 0.22
    # is 140 standard errors away.
    d, n = 10, 100
    mean, se = _mean_and_se(_linf_errors(marginals_linf, d, n, 200_000, np.random.default_rng([SEED, 1])))
    assert se < 0.00015
    assert abs(mean - expected_linf_errors(d, n, 1.0)["linf_ball"]) <= Z * se
    assert expected_linf_errors(d, n, 1.0)["linf_ball"] == 2 * d / n
    assert abs(mean - 2 * (d + 1) / n) > Z * se


@pytest.mark.parametrize(("d", "draws"), [(10, 200_000), (1000, 2_000)])
def test_laplace_error_is_h_d_times_the_scale_and_the_ratio_is_h_d_not_ln_d(d, draws):
    n = 100
    rng = np.random.default_rng([SEED, d])
    lap, lap_se = _mean_and_se(_linf_errors(marginals_laplace, d, n, draws, rng))
    ball, ball_se = _mean_and_se(_linf_errors(marginals_linf, d, n, draws, rng))
    expected = expected_linf_errors(d, n, 1.0)
    assert expected["laplace"] == pytest.approx(2 * d / n * harmonic(d), rel=1e-15)
    assert abs(lap - expected["laplace"]) <= Z * lap_se
    assert abs(ball - expected["linf_ball"]) <= Z * ball_se
    # The ratio of the two means (independent samples), with its delta-method standard error.
    ratio = lap / ball
    ratio_se = ratio * math.hypot(lap_se / lap, ball_se / ball)
    assert abs(ratio - harmonic(d)) <= Z * ratio_se
    assert abs(ratio - math.log(d)) > Z * ratio_se
