"""`trials="auto"` grows the trial count in rounds, paid for by a union bound; no guessing the count."""

import json

import numpy as np
import pytest
from dpaudit.audit import audit_mechanism
from dpaudit.audit.audits.auto_trials import AutoBudget, planned_rounds
from dpaudit.audit.cli import main
from dpaudit.mechanisms import InvalidParameterError, blackbox, get_mechanism


def exact_answer_sometimes(p):
    """Laplace(1) on a count, but the exact count with probability `p`: not (1, δ)-DP for δ < p."""

    def release(data, rng, size):
        out = np.sum(data) + rng.laplace(0.0, 1.0, size)
        out[rng.random(size) < p] = np.sum(data)
        return out

    return release


def test_planned_rounds_double_and_fit_the_budget():
    sizes = planned_rounds(2 * 10**7)
    assert sizes[0] == 100_000 and all(b == 2 * a for a, b in zip(sizes, sizes[1:]))
    assert sum(sizes) <= 2 * 10**7 < sum(sizes) + 2 * sizes[-1]
    assert planned_rounds(50) == [50]


def test_the_rounds_confidences_add_up_to_the_stated_one():
    res = audit_mechanism(get_mechanism("laplace"), trials="auto", budget=AutoBudget(max_trials=700_000), seed=0)
    auto = res.to_dict()["lower_bound"]["auto"]
    assert [r["trials"] for r in auto["rounds"]] == [100_000, 200_000, 400_000]
    assert sum(1.0 - r["confidence"] for r in auto["rounds"]) == pytest.approx(0.05)
    assert res.lower_bound.confidence == 0.95 and res.lower_bound.epsilon == max(r["epsilon"] for r in auto["rounds"])
    assert auto["trials_drawn"] == 700_000 and auto["stopped"] == "budget of trials"


@pytest.mark.parametrize("seed", [0, 1])
def test_atoms_are_ranked_by_what_they_would_certify(seed):
    # At 2·10⁵ trials the selection half sees about 20 exact answers, none on the other dataset: the best test.
    mech = blackbox(exact_answer_sometimes(0.002), epsilon=1.0, null_record=0.0, delta=1e-4)
    res = audit_mechanism(mech, [0.0], [1.0], trials=200_000, seed=seed)
    assert res.verdict == "violation" and res.test.startswith("atom-likelihood-ratio")


def test_a_leak_missed_at_a_fixed_count_is_found_in_rounds():
    mech = blackbox(exact_answer_sometimes(0.0002), epsilon=1.0, null_record=0.0, delta=1e-5)
    assert audit_mechanism(mech, [0.0], [1.0], trials=200_000, seed=0).verdict == "consistent"
    res = audit_mechanism(mech, [0.0], [1.0], trials="auto", seed=0)
    auto = res.to_dict()["lower_bound"]["auto"]
    assert res.verdict == "violation" and auto["stopped"] == "violation certified"
    assert auto["trials_drawn"] <= 2 * 10**7


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_correct_mechanism_is_not_flagged_in_rounds(seed):
    res = audit_mechanism(get_mechanism("laplace"), trials="auto", budget=AutoBudget(max_trials=1_500_000), seed=seed)
    assert res.verdict == "consistent"


def test_the_time_budget_and_the_tight_fraction_stop_the_rounds():
    laplace = get_mechanism("laplace")
    timed = audit_mechanism(laplace, trials="auto", budget=AutoBudget(max_seconds=1e-3), seed=0)
    assert len(timed.to_dict()["lower_bound"]["auto"]["rounds"]) == 1
    assert timed.to_dict()["lower_bound"]["auto"]["stopped"] == "budget of seconds"
    tight = audit_mechanism(laplace, trials="auto", budget=AutoBudget(tight=0.5), seed=0)
    assert tight.to_dict()["lower_bound"]["auto"]["stopped"] == "bound within 0.5 of the claim"


@pytest.mark.parametrize("budget", [dict(max_trials=0), dict(max_seconds=-1), dict(tight=1.5)])
def test_bad_budgets_are_one_sentence(budget):
    with pytest.raises(InvalidParameterError, match="parameter of audit_mechanism"):
        AutoBudget(**budget)


def test_an_inconclusive_audit_says_how_many_trials_would_likely_decide():
    def laplace_count(data, rng, size):  # Laplace(1) on a count: 1-DP, claimed 0.7
        return np.sum(data) + rng.laplace(0.0, 1.0, size)

    mech = blackbox(laplace_count, epsilon=0.7, null_record=0.0)
    small = audit_mechanism(mech, [0.0], [1.0], trials=1000, seed=1)
    advised = small.to_dict()["lower_bound"]["trials_for_violation"]
    assert small.verdict == "consistent" and 1000 < advised
    assert "would likely certify" in small.summary()
    assert audit_mechanism(mech, [0.0], [1.0], trials=advised, seed=1).verdict == "violation"
    assert "trials_for_violation" not in audit_mechanism(get_mechanism("laplace"), trials=100_000, seed=0).lower_bound.details


def test_cli_takes_auto_and_counts_written_as_floats(capsys):
    assert main(["audit", "laplace", "--trials", "auto", "--max-trials", "3e5", "--json", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["lower_bound"]["auto"]["trials_drawn"] == 300_000
    assert main(["audit", "laplace", "--trials", "1e5", "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["lower_bound"]["trials"] == 100_000


def test_under_a_time_budget_the_first_round_is_sized_to_fit_it():
    import time

    from dpaudit.audit.audits.auto_trials import FIRST_ROUND, first_round

    def draw(n):  # 0.1 ms a trial on each dataset
        time.sleep(n * 1e-4)

    assert first_round(draw, None) == FIRST_ROUND
    assert 1000 <= first_round(draw, 2.0) <= 0.25 * 2.0 / 1e-4  # sleep overruns only make it smaller
    assert first_round(draw, 1e-6) == 100


def test_a_slow_mechanism_under_max_seconds_plays_a_small_first_round():
    import time

    def slow(data, rng):
        start = time.perf_counter()
        while time.perf_counter() - start < 5e-4:
            pass
        return float(np.sum(data) + rng.laplace())

    res = audit_mechanism(blackbox(slow, epsilon=1.0, null_record=0.0), [0.0], [1.0], trials="auto", seed=0,
                          budget=AutoBudget(max_seconds=2.0))
    assert res.to_dict()["lower_bound"]["auto"]["rounds"][0]["trials"] <= 1000 and res.verdict == "consistent"
