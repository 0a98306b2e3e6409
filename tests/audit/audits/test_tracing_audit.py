"""Tracing audits: power on exact releases, sound under the null over many seeds, group privacy, bad input."""

import numpy as np
import pytest
from dpaudit.attacks.games import MultiRun, OneRun
from dpaudit.audit.audits.tracing import audit_tracing
from dpaudit.audit.estimators.certify import Bound
from dpaudit.mechanisms import InvalidParameterError, get_mechanism
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.transforms import copies
from scipy.stats import binom

SEEDS = 100
CONFIDENCE = 0.95


def _max_positive(n: int) -> int:
    # Sound bounds exceed a true value with probability ≤ 1 − confidence per seed; allow the 99.9% quantile.
    return int(binom.ppf(0.999, n, 1 - CONFIDENCE))


def _ignores_data(num_rows: int, dim: int) -> Mechanism:
    def sample(data, size, rng):
        return rng.normal(0.0, 0.1, (size, dim))

    return Mechanism("ignores-data", sample, Claim(1.0, 1e-5, Relation.REPLACE_ONE),
                     params={"num_rows": num_rows, "dim": dim})


def test_exact_release_members_are_traced_with_known_and_reference_biases():
    mech = get_mechanism("marginals_exact", num_rows=100, dim=5000)
    known = audit_tracing(mech, game=MultiRun(600), fresh_data=True, seed=11)
    reference = audit_tracing(mech, game=MultiRun(600), fresh_data=True, scorer="reference", reference_rows=100, seed=11)
    assert known.attack["tpr_at_1pct_fpr"] > 0.9
    assert reference.attack["tpr_at_1pct_fpr"] > 0.8
    assert known.verdict == reference.verdict == "violation"


@pytest.mark.parametrize("game", [dict(game=MultiRun(400)), dict(game=MultiRun(200), fresh_data=True), dict(game=OneRun(None))])
@pytest.mark.parametrize("score", ["known", "tardos"])
def test_a_release_that_ignores_its_data_certifies_nothing(game, score):
    mech = _ignores_data(200, 50)
    positive = sum(audit_tracing(mech, scorer=score, seed=s, **game).lower_bound.epsilon > 0 for s in range(SEEDS // 2))
    assert positive <= _max_positive(SEEDS // 2)


@pytest.mark.parametrize("name", ["marginals_laplace", "marginals_gaussian", "marginals_linf"])
def test_correct_marginals_stay_below_their_claim(name):
    # One column and few rows: when the fresh row differs from the member, tracing certifies close to the
    # claim (Laplace: about 2.85 of 3 at seed 3), so an unsound game or estimator would show here.
    mech = get_mechanism(name, epsilon=3.0, num_rows=20, dim=1)
    bounds = [audit_tracing(mech, game=MultiRun(20_000), seed=s).lower_bound.epsilon for s in range(40)]
    assert sum(b > mech.claim.epsilon for b in bounds) <= _max_positive(40)
    assert max(bounds) > 1.0


def test_the_default_one_run_game_adapts_to_fewer_rows_and_an_explicit_excess_is_refused():
    mech = get_mechanism("marginals_laplace", epsilon=1.0, num_rows=40, dim=20)
    assert audit_tracing(mech, game=OneRun()).attack["slots"] == 40
    assert audit_tracing(mech, game=OneRun(None)).attack["slots"] == 40
    assert audit_tracing(mech, game=OneRun(30)).attack["slots"] == 30
    with pytest.raises(InvalidParameterError, match="more slots"):
        audit_tracing(mech, game=OneRun(41))


def test_group_copies_claim_group_privacy_and_stay_below_it():
    base = get_mechanism("marginals_laplace", epsilon=0.5, num_rows=40, dim=3)
    grouped = copies(base, 4)
    assert grouped.claim.epsilon == pytest.approx(2.0)
    results = [audit_tracing(base, game=MultiRun(4000), group_size=4, seed=s) for s in range(20)]
    assert all(r.claim.epsilon == pytest.approx(2.0) and r.upper_bound.epsilon == pytest.approx(2.0) for r in results)
    assert sum(r.lower_bound.epsilon > 2.0 for r in results) <= _max_positive(20)
    assert max(r.lower_bound.epsilon for r in results) > 0.5


def test_group_sees_copied_rows():
    seen = []

    def sample(data, size, rng):
        seen.append(np.asarray(data))
        return np.asarray(data).mean(axis=0, dtype=float) + np.zeros((size, 1))

    mech = Mechanism("spy", sample, Claim(1.0, 0.0, Relation.REPLACE_ONE), params={"num_rows": 12, "dim": 3})
    audit_tracing(mech, game=MultiRun(40), group_size=3, seed=0)
    assert seen and all(d.shape == (12, 3) for d in seen)
    assert all(np.array_equal(d[::3], d[1::3]) and np.array_equal(d[::3], d[2::3]) for d in seen)


@pytest.mark.parametrize("kwargs, message", [
    (dict(group_size=3), "divisible by 3"),
    (dict(scorer="reference"), "needs reference_rows"),
    (dict(scorer="known", reference_rows=3), "go with the 'reference' score only"),
    (dict(bound=Bound("one-run")), "certified by threshold or gdp"),
    (dict(rows=20), "was built for num_rows = 10"),
])
def test_bad_input_is_one_sentence(kwargs, message):
    mech = get_mechanism("marginals_laplace", num_rows=10, dim=4)
    with pytest.raises(InvalidParameterError, match=message):
        audit_tracing(mech, game=MultiRun(10), **kwargs)
