"""Regressions found in review: verdicts at another δ, black-box pair search, public n, subsampling, CLI errors."""

import numpy as np
import pytest
from dpaudit.audit import audit_mechanism
from dpaudit.audit.cli import main
from dpaudit.audit.estimators import LowerBound
from dpaudit.audit.results.result import refutes
from dpaudit.mechanisms import Claim, InvalidParameterError, blackbox, get_mechanism
from dpaudit.mechanisms.laplace import laplace
from dpaudit.mechanisms.transforms import subsample


def test_a_bound_at_a_smaller_delta_does_not_refute_the_claim():
    claim = Claim(1.0, 1e-3)
    assert not refutes(LowerBound(epsilon=2.0, confidence=0.95, method="x", delta=0.0), claim)
    assert refutes(LowerBound(epsilon=2.0, confidence=0.95, method="x", delta=1e-3), claim)


def test_pair_search_on_a_black_box_changes_one_record_only():
    def noisy_sum(data, rng, size):
        return np.sum(data) + rng.laplace(0.0, 1.0, size)

    mech = blackbox(noisy_sum, epsilon=1.0, default_pair=(np.zeros(5), np.eye(5)[0]))
    res = audit_mechanism(mech, trials=100_000, seed=0, search=True)
    assert res.verdict == "consistent"
    found = res.lower_bound.details["pair_search"]
    assert np.sum(np.asarray(found["d0"]) != np.asarray(found["d1"])) == 1


def test_mechanisms_calibrated_to_a_public_count_refuse_other_lengths():
    with pytest.raises(InvalidParameterError, match="calibrated to 10 records"):
        audit_mechanism(get_mechanism("clipped_mean"), [0.0, 0.0], [0.0, 1.0], trials=100)


def test_subsampling_keeps_each_of_many_records_with_probability_q():
    # 100 records of value 1, q = 1/2: the sum is Binomial(100, 1/2), standard deviation 5.
    rng = np.random.default_rng(0)
    draws = subsample(laplace(epsilon=1000.0), 0.5).sample(np.ones(100), 4000, rng)
    # The sample standard deviation of 4000 draws is within 5% of 5 with overwhelming probability.
    assert abs(np.std(draws) - 5.0) < 0.25


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "numpy:sum"],
        ["suite", "--only", "laplace", "--out", "/dev/null/x"],
        ["experiment", "group-privacy", "--quick", "--out", "/dev/null/x"],
    ],
)
def test_cli_errors_are_one_sentence(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_bounds_survive_extreme_parameters(capsys):
    assert main(["bounds", "gaussian", "--sigma", "1e-9", "--json"]) == 0
    assert main(["bounds", "compose", "--epsilon", "1000", "--k", "3", "--json"]) == 0
    assert "Traceback" not in capsys.readouterr().err
