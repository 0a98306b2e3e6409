"""Test choice for discrete outputs of few distinct values: the likelihood-ratio table fitted on every selection output."""

import numpy as np
import pytest
from dpaudit.attacks.distinguish import FEW_CATEGORIES, few_category_scorers, select_test
from dpaudit.attacks.selection_budget import discrete_level
from dpaudit.audit import audit_mechanism
from dpaudit.audit.estimators.projection import projected_bound
from dpaudit.mechanisms import blackbox, get_mechanism
from dpaudit.mechanisms.builtins.sparse_vector import cut_off

OUTCOMES = np.array([[0, 0], [0, 1], [1, 0]])


def test_the_table_sees_a_category_that_only_the_second_half_shows():
    out0 = OUTCOMES[np.repeat([0, 1], 500)]
    out1 = OUTCOMES[np.repeat([0, 2], 500)]  # outcome 2 comes from D1 only, and only in its second half
    choice = select_test(out0, out1, objective=projected_bound(10**4, 0.0, 0.05, level=0.5), categories=3)
    assert choice.test.scorer.name == "category-likelihood-ratio"
    shared, d0_only, d1_only = choice.test.scorer.score(OUTCOMES)  # log(P1/P0) per outcome; 0 for an unseen one
    assert d1_only > shared > d0_only and d1_only > 0


def test_single_numbers_keep_the_value_threshold_beside_the_table():
    numbers = np.arange(10.0)
    assert [s.name for s in few_category_scorers(numbers, numbers + 1)] == ["value", "category-likelihood-ratio"]
    assert [s.name for s in few_category_scorers(OUTCOMES, OUTCOMES)] == ["category-likelihood-ratio"]


@pytest.mark.parametrize("seed", range(4))
def test_sparse_vector_selection_finds_its_rarest_best_category(seed):
    # ε = 0.1, c = 1, 10 queries, an audit of 10⁷ trials (2·10⁶ to select, 8·10⁶ held out): the best test is the one
    # outcome "first ⊤ at query 10", 0.6% of D0's mass (benchmarks/discrete_selection.py, which also scores the misses).
    mech = get_mechanism("sparse_vector", epsilon=0.1, threshold=0.5)
    rng = np.random.default_rng(seed)
    out0, out1 = (mech.sample(d, 2_000_000, rng) for d in mech.default_pair)
    categories = 11
    assert categories <= FEW_CATEGORIES
    objective = projected_bound(8_000_000, 0.0, 0.1, level=discrete_level(categories), interval="ratio")
    choice = select_test(out0, out1, objective=objective, categories=categories)
    outcomes = cut_off(np.vstack([np.eye(10, dtype=bool), np.zeros((1, 10), dtype=bool)]), 1)
    assert np.flatnonzero(choice.test.rejects(outcomes)).tolist() == [9]


def test_values_seen_a_few_times_on_one_dataset_do_not_steer_the_test():
    # A user's discrete Laplace (ε = 1, called once per output): with every value in the table, the values seen
    # twice on D0 only won on seed 2, and the audit certified 0.57.
    def discrete_laplace(data, rng):
        return int(sum(data)) + int(rng.geometric(1 - np.exp(-1.0))) - int(rng.geometric(1 - np.exp(-1.0)))

    mech = blackbox(discrete_laplace, epsilon=1.0, default_pair=([1, 1, 0], [1, 1, 1]), null_record=0)
    assert audit_mechanism(mech, trials=1_000_000, seed=2).lower_bound.epsilon >= 0.9
