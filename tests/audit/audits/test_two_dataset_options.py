"""audit_mechanism's choices: the interval, the selection size for discrete outputs, Poisson held-out counts."""

import dpaudit.attacks.selection_budget as selection
import numpy as np
import pytest
from dpaudit.attacks.selection_budget import (
    DISCRETE_SELECTION,
    LARGE_SHARE,
    MAX_DISCRETE_LEVEL,
    MAX_LARGE_SELECTION,
    MAX_SELECTION,
    MAX_SELECTION_ELEMENTS,
    MIN_SELECTION,
    discrete_level,
    discrete_selection_size,
    split_budget,
)
from dpaudit.audit import audit_mechanism
from dpaudit.errors import DPAuditError
from dpaudit.mechanisms import InvalidParameterError, blackbox, get_mechanism


def test_ratio_interval_refuses_approximate_dp():
    with pytest.raises(DPAuditError, match=r"^The ratio interval certifies pure ε only; .*\.$"):
        audit_mechanism(get_mechanism("gaussian"), trials=1000, interval="ratio")


def test_unknown_interval_is_one_sentence():
    with pytest.raises(DPAuditError, match=r"^The 'interval' parameter of audit_mechanism must be one of two-rates, ratio"):
        audit_mechanism(get_mechanism("laplace"), trials=1000, interval="wald")


def test_discrete_outputs_get_a_fifth_of_the_trials_to_choose_the_test():
    trials = 4_000_000
    details = audit_mechanism(get_mechanism("randomized_response"), trials=trials, seed=1).to_dict()["lower_bound"]
    assert split_budget(trials)[0] < details["selection"] == discrete_selection_size(trials, 1) == trials // 5
    continuous = audit_mechanism(get_mechanism("laplace"), trials=trials, seed=1).to_dict()["lower_bound"]
    assert continuous["selection"] == split_budget(trials)[0]


def test_discrete_selection_is_capped_by_count_and_memory():
    assert discrete_selection_size(10**9, 1) == DISCRETE_SELECTION
    assert discrete_selection_size(10**9, 10**6) < DISCRETE_SELECTION


def test_held_out_counts_are_poisson_around_the_held_out_size():
    details = audit_mechanism(get_mechanism("laplace"), trials=1_000_000, seed=2).to_dict()["lower_bound"]
    n = details["held_out"]
    for key in ("held_out_d0", "held_out_d1"):
        assert abs(details[key] - n) < 5 * np.sqrt(n)  # Poisson(n): 5 standard deviations
    assert details["held_out_d0"] != details["held_out_d1"]


def test_discrete_level_is_weaker_for_fewer_categories_and_capped():
    levels = [discrete_level(k) for k in (1, 2, 11, 240, 4096)]
    assert levels[0] == levels[1] == MAX_DISCRETE_LEVEL
    assert all(a >= b for a, b in zip(levels, levels[1:])) and levels[2] > levels[3] > levels[4]


def test_selection_is_a_tenth_up_to_its_cap_then_grows_again_past_ten_million_trials():
    sizes = {trials: split_budget(trials)[0] for trials in (10**5, 2 * 10**6, 10**7, 5 * 10**7, 10**10)}
    assert sizes[10**5] == 10**4 and sizes[2 * 10**6] == sizes[10**7] == MAX_SELECTION
    assert sizes[5 * 10**7] == 5 * 10**7 // LARGE_SHARE > MAX_SELECTION
    assert sizes[10**10] == MAX_LARGE_SELECTION
    assert split_budget(5 * 10**7, MAX_SELECTION_ELEMENTS // 1000)[0] == 1000


def test_split_budget_caps_the_selection_in_elements():
    assert split_budget(10**7, MAX_SELECTION_ELEMENTS // 1000)[0] == 1000
    assert split_budget(10**7, 10 * MAX_SELECTION_ELEMENTS)[0] == MIN_SELECTION
    assert split_budget(10**7, 1) == split_budget(10**7)


def test_audit_learns_the_output_size_and_screens_outputs_too_wide_for_the_selection(monkeypatch):
    monkeypatch.setattr(selection, "MAX_SELECTION_ELEMENTS", 20_000)
    mech = blackbox(lambda data, rng, size: rng.laplace(0.0, 1.0, (size, 50)) + np.sum(data), epsilon=1.0, null_record=0.0,
                    name="wide", default_pair=([0.0], [1.0]))
    details = audit_mechanism(mech, trials=10_000, seed=0).to_dict()["lower_bound"]
    wanted = split_budget(10_000)[0]
    assert 20_000 // 50 < wanted == details["screening"]["trials"]
    chosen = split_budget(10_000 - wanted, len(details["screening"]["coordinates"]) + 1)[0]  # and the linear score
    assert details["selection"] == wanted + chosen and details["held_out"] == 10_000 - wanted - chosen


@pytest.mark.parametrize("interval", ["two-rates", "ratio"])
def test_result_names_its_interval(interval):
    result = audit_mechanism(get_mechanism("laplace"), trials=10_000, seed=0, interval=interval)
    assert result.to_dict()["lower_bound"]["interval"] == interval
    assert result.to_dict()["lower_bound"]["method"] == "clopper-pearson"


def test_mechanisms_calibrated_to_a_public_count_refuse_other_lengths():
    with pytest.raises(InvalidParameterError, match="calibrated to 10 records"):
        audit_mechanism(get_mechanism("clipped_mean"), [0.0, 0.0], [0.0, 1.0], trials=100)
