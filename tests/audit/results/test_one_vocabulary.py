"""One name for each idea across families, Python and JSON: the bound beside, and the estimator as `--estimator` spells it."""

from dpaudit.attacks.games import MultiRun
from dpaudit.audit import audit_canaries, audit_mechanism
from dpaudit.audit.estimators.certify import ESTIMATORS
from dpaudit.mechanisms import get_mechanism


def test_a_two_dataset_result_names_its_bounds_beside_as_a_membership_result_does_and_keeps_the_old_name():
    res = audit_mechanism(get_mechanism("gaussian", epsilon=1.0, delta=1e-5), trials=4000, seed=0)
    assert res.beside and res.secondary is res.beside
    assert [b.estimator for b in res.beside] == ["gdp"] and all(b.assumption for b in res.beside)
    data = res.to_dict()
    assert data["lower_bound"]["estimator"] == "held-out"
    assert [b["estimator"] for b in data["secondary_bounds"]] == ["gdp"]


def test_a_default_membership_audit_says_its_estimator_as_the_option_spells_it_beside_its_method():
    res = audit_canaries(get_mechanism("canary_gaussian_sum"), game=MultiRun(400), seed=0)
    data = res.to_dict()
    assert data["lower_bound"]["estimator"] == "threshold" == res.lower_bound.estimator
    assert data["estimator"] == data["lower_bound"]["method"] == res.estimator  # the method, as before: kept
    assert (type(res.observations), data["lower_bound"]["estimator"]) in ESTIMATORS
