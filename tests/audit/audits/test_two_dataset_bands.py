"""The bands interval of the two-dataset audit: scalar outputs, every output counted, the threshold chosen after."""

import numpy as np
import pytest
from dpaudit.attacks.output_histogram import OutputHistogram, cell_counts, grid_from
from dpaudit.audit import Interrupted, audit_mechanism
from dpaudit.mechanisms import InvalidParameterError, blackbox
from dpaudit.mechanisms.registry import get_mechanism
from scipy.stats import binom

BETA = 0.05


def _allowed(runs: int) -> int:
    """A sound audit exceeds this count of false certifications with probability ≤ 1e-4."""
    return int(binom.isf(1e-4, runs, BETA))


def _direct_counts(grid, out0, out1, d1_high, strict):
    t = grid[:, None]
    nan0, nan1 = np.isnan(out0)[None, :], np.isnan(out1)[None, :]
    guess = {(True, False): np.greater_equal, (True, True): np.greater,
             (False, False): np.less_equal, (False, True): np.less}[d1_high, strict]
    # NaN sorts above every number: on the D1 side of "x ≥ t" and "x > t", never of "≤" or "<".
    fp = (guess(out0[None, :], t) | (nan0 & d1_high)).sum(axis=1)
    fn = (~(guess(out1[None, :], t) | (nan1 & d1_high))).sum(axis=1)
    return fp, fn


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("d1_high", [True, False])
def test_cell_counts_give_the_exact_errors_of_every_grid_test_with_ties_and_nan(d1_high, strict):
    rng = np.random.default_rng(0)
    out0 = rng.integers(0, 6, 500).astype(float)
    out1 = np.append(rng.normal(2.0, 2.0, 499), np.nan)
    grid = grid_from(out0[:100], out1[:100], size=12)
    hist = OutputHistogram(grid, cell_counts(grid, out0), cell_counts(grid, out1))
    fp, fn = hist.error_counts(d1_high=d1_high, strict=strict)
    expected_fp, expected_fn = _direct_counts(grid, out0, out1, d1_high, strict)
    assert hist.n0 == 500 and hist.n1 == 500 and not np.isnan(grid).any()
    assert np.array_equal(fp, expected_fp) and np.array_equal(fn, expected_fn)


def test_grid_keeps_few_distinct_outputs_and_caps_many():
    assert np.array_equal(grid_from(np.array([3.0, 1.0, 1.0]), np.array([2.0, np.nan])), [1.0, 2.0, 3.0])
    rng = np.random.default_rng(1)
    grid = grid_from(rng.normal(size=10_000), rng.normal(size=10_000), size=500)
    assert grid.size <= 500 and np.all(np.diff(grid) > 0)


def _null(data, rng, size):
    """Output independent of the data: any certified ε > 0 is a false certification."""
    return rng.normal(0.0, 1.0, size)


def _null_ties(data, rng, size):
    return rng.integers(0, 3, size).astype(float)


def _tight(data, rng, size):
    """Laplace noise of scale 1 on a sum of sensitivity 1: exactly 1-DP, so a bound above 1 is a false certification."""
    return np.sum(data) + rng.laplace(0.0, 1.0, size)


def _false_certifications(fn, above: float, runs: int) -> int:
    mech = blackbox(fn, epsilon=1.0, null_record=0.0, delta=1e-5)
    return sum(audit_mechanism(mech, [0.0], [1.0], trials=2_000, seed=s, interval="bands").lower_bound.epsilon > above
               for s in range(runs))


CASES = {"null": (_null, 0.0), "null-ties": (_null_ties, 0.0), "tight-laplace": (_tight, 1.0)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_null_and_tight_mechanisms_are_over_certified_at_most_at_rate_beta(case):
    runs = 200
    assert _false_certifications(*CASES[case], runs=runs) <= _allowed(runs)


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_null_and_tight_mechanisms_over_1000_seeds(case):
    runs = 1000
    assert _false_certifications(*CASES[case], runs=runs) <= _allowed(runs)


@pytest.mark.parametrize("name", ["laplace", "gaussian"])
def test_bands_reach_the_claim_region_and_name_the_test(name):
    res = audit_mechanism(get_mechanism(name), trials=100_000, seed=3, interval="bands")
    details = res.to_dict()["lower_bound"]
    assert res.verdict == "consistent" and res.lower_bound.method == "simultaneous-band"
    assert 0.4 < res.lower_bound.epsilon <= res.upper_bound.epsilon
    assert details["interval"] == "bands" and res.test == details["test"]
    assert res.lower_bound.trials == details["held_out"] == 100_000 and details["selection"] == 0
    # The first sample is counted too: about 100,000 outputs per dataset in all (Poisson chunks).
    assert abs(details["held_out_d0"] - 100_000) < 6 * np.sqrt(100_000)


def test_a_mechanism_with_too_little_noise_is_flagged():
    mech = blackbox(lambda data, rng, size: np.sum(data) + rng.laplace(0.0, 1 / 3, size), epsilon=1.0, null_record=0.0)
    res = audit_mechanism(mech, [0.0], [1.0], trials=20_000, seed=0, interval="bands")
    assert res.verdict == "violation" and res.lower_bound.epsilon > 1.0


def test_results_match_on_rerun():
    mech = get_mechanism("laplace")
    a = audit_mechanism(mech, trials=30_000, seed=5, interval="bands")
    b = audit_mechanism(mech, trials=30_000, seed=5, interval="bands")
    assert a.lower_bound == b.lower_bound


def test_vector_and_complex_outputs_are_refused_in_one_sentence():
    for fn in (lambda data, rng, size: rng.normal(size=(size, 3)), lambda data, rng, size: rng.normal(size=size) + 1j):
        with pytest.raises(InvalidParameterError, match="needs scalar outputs"):
            audit_mechanism(blackbox(fn, epsilon=1.0, null_record=0.0), [0.0], [1.0], trials=1_000, interval="bands")


def test_text_outputs_are_thresholded_through_their_codes():
    """Randomized response answering "yes"/"no" for the first record: ln 3-DP, exactly."""
    def coin(data, rng):
        return "yes" if (rng.random() < 0.75) == bool(data[0]) else "no"

    res = audit_mechanism(blackbox(coin, epsilon=np.log(3), relation="replace-one"), [0], [1], trials=20_000,
                          seed=0, interval="bands")
    assert 0.5 < res.lower_bound.epsilon and res.verdict == "consistent"


def test_an_interrupted_bands_audit_keeps_what_was_counted():
    calls = {"n": 0}

    def stops_later(data, rng, size):
        calls["n"] += 1
        if calls["n"] > 6:
            raise KeyboardInterrupt
        return np.sum(data) + rng.laplace(0.0, 1.0, size)

    mech = blackbox(stops_later, epsilon=1.0, null_record=0.0)
    with pytest.raises(Interrupted) as info:
        audit_mechanism(mech, [0.0], [1.0], trials=2_000_000, seed=0, interval="bands")
    partial = info.value.partial
    assert partial is not None and partial.phases.interrupted
    drawn = partial.evidence.n0
    assert 0 < partial.lower_bound.trials < 2_000_000 and abs(drawn - partial.lower_bound.trials) < 6 * np.sqrt(drawn)
