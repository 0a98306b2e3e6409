"""`MultiRun(runs, sequential=True)`: false violations under continuous monitoring, a blatant bug caught early, refusals."""

import json

import numpy as np
import pytest
from dpaudit.attacks.games import MultiRun
from dpaudit.audit import Bound, audit_canaries, audit_scores, recertify
from dpaudit.audit.audits.sequential_runs import FIRST_EPOCH, look_sizes, planned_epochs
from dpaudit.errors import InvalidParameterError
from dpaudit.execution.interrupted import Interrupted
from dpaudit.mechanisms import blackbox, get_mechanism
from dpaudit.mechanisms.records import BoxRecords
from scipy.stats import binom

BETA = 0.05
TIGHT = ["geometric", "randomized_response", "gaussian"]
"""Exactly tight at their claims: discrete Laplace, randomized response, and the Gaussian at its exact (analytic) profile."""


def _false_violations(name: str, seeds: range, max_runs: int) -> int:
    """Return how many seeds' sequential canary audits of the exactly tight mechanism `name` certified a violation.

    `give_up=False`: each game watches its bound until the budget and stops
    only at the first certified violation, the most chances to be wrong.
    """
    mech = get_mechanism(name)
    game = MultiRun(max_runs, sequential=True, give_up=False)
    return sum(audit_canaries(mech, game=game, bound=Bound(confidence=1 - BETA), seed=s).verdict == "violation"
               for s in seeds)


@pytest.mark.parametrize("name", TIGHT)
def test_exactly_tight_mechanisms_are_flagged_at_most_beta_of_the_time_under_continuous_monitoring(name):
    seeds = range(10)
    assert _false_violations(name, seeds, 1000) <= binom.ppf(0.999, len(seeds), BETA)


@pytest.mark.slow
@pytest.mark.parametrize("name", TIGHT)
def test_exactly_tight_mechanisms_over_200_seeds(name):
    seeds = range(200)
    assert _false_violations(name, seeds, 4000) <= binom.ppf(0.999, len(seeds), BETA)


def _sum_with_a_tenth_of_its_noise(data, rng, size=None):
    return float(np.sum(data)) + rng.laplace(0.0, 0.1, size)


def _tenth_noise():
    return blackbox(_sum_with_a_tenth_of_its_noise, epsilon=1.0, null_record=0.0, records=BoxRecords(0.0, 1.0),
                    name="laplace-tenth-noise")


@pytest.mark.parametrize("seed", range(3))
def test_a_blatant_bug_is_certified_within_the_first_epoch(seed):
    res = audit_canaries(_tenth_noise(), game=MultiRun(10_000, sequential=True), seed=seed)
    assert res.verdict == "violation"
    assert res.attack["stopped"] == "violation certified"
    assert res.lower_bound.trials <= FIRST_EPOCH


def _sum_with_noise(data, rng, size=None):
    return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)


def test_a_mechanism_far_inside_its_claim_stops_once_the_claim_is_out_of_reach_and_the_json_lists_the_epochs():
    loose = blackbox(_sum_with_noise, epsilon=3.0, null_record=0.0, records=BoxRecords(0.0, 1.0), name="laplace-at-1-claims-3")
    res = audit_canaries(loose, game=MultiRun(20_000, sequential=True), seed=1)
    out = json.loads(json.dumps(res.to_dict()))
    lower = out["lower_bound"]
    assert out["verdict"] == "consistent" and 0.0 <= lower["epsilon"] <= 1.0
    assert lower["method"] == "beta-binomial mixture confidence sequences"
    assert lower["sequential"]["stopped"] == "claim out of reach" and lower["sequential"]["runs_drawn"] < 20_000
    epochs = lower["sequential"]["epochs"]
    assert all(e["selection_runs"] > 0 and e["confidence"] < 1 for e in epochs)
    assert sum(e["selection_runs"] + e["judged_runs"] for e in epochs) == lower["sequential"]["runs_drawn"]
    assert res.observations is None
    with pytest.raises(InvalidParameterError, match="confidence sequences it was played with"):
        recertify(res, Bound(confidence=0.9))


def test_the_epochs_and_looks_are_planned_within_the_budget():
    assert planned_epochs(10_000) == [100, 400, 1600, 7900]
    assert planned_epochs(200) == [40, 160] and planned_epochs(60) == [60]
    assert look_sizes(150) == [16, 24, 36, 54, 20] and look_sizes(7) == [7]
    assert all(size >= 16 for size in look_sizes(10_000)) and sum(look_sizes(10_000)) == 10_000


@pytest.mark.parametrize("bound", [Bound(estimator="gdp", delta=1e-5), Bound(strategy=__import__(
    "dpaudit.audit.estimators.thresholds", fromlist=["Split"]).Split())])
def test_another_estimator_or_strategy_is_refused_in_one_sentence(bound):
    with pytest.raises(InvalidParameterError, match="sequential"):
        audit_canaries(get_mechanism("laplace"), game=MultiRun(1000, sequential=True), bound=bound)


def test_saved_scores_are_not_played_sequentially():
    from dpaudit.attacks.observations import Observations

    obs = Observations(np.arange(20.0), np.arange(20) % 2 == 0)
    with pytest.raises(InvalidParameterError, match="fixed number of runs"):
        audit_scores(obs, game=MultiRun(20, sequential=True))


def test_ctrl_c_returns_the_bound_so_far():
    calls = []

    def stops_on_the_eighth_call(data, rng, size=None):
        calls.append(1)
        if len(calls) == 8:
            raise KeyboardInterrupt
        return float(np.sum(data)) + rng.laplace(0.0, 1.0, size)

    mech = blackbox(stops_on_the_eighth_call, epsilon=1.0, null_record=0.0, records=BoxRecords(0.0, 1.0), name="stops")
    with pytest.raises(Interrupted) as stop:
        audit_canaries(mech, game=MultiRun(10_000, sequential=True), seed=0)
    partial = stop.value.partial
    assert partial is not None and partial.attack["stopped"] == "interrupted"
    assert 0.0 <= partial.lower_bound.epsilon <= 1.0 and partial.lower_bound.trials == stop.value.done


def test_a_sequential_game_on_dask_opens_one_client_for_all_its_batches(monkeypatch):
    distributed = pytest.importorskip("distributed")
    import contextlib

    from dpaudit.execution import runs
    from dpaudit.execution.execution import Execution

    opened, batches, real_run_each = [], [], runs.run_each

    @contextlib.contextmanager
    def counted_client(*, workers=None, scheduler=None):  # an in-process cluster stands in for the workers' processes
        opened.append(workers)
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
            with distributed.Client(cluster) as client:
                yield client

    def counted_run_each(*args, **kwargs):
        batches.append(1)
        return real_run_each(*args, **kwargs)

    monkeypatch.setattr(runs, "dask_client", counted_client)
    monkeypatch.setattr(runs, "run_each", counted_run_each)
    game = MultiRun(400, sequential=True, give_up=False)
    on_dask = audit_canaries(get_mechanism("laplace"), game=game, seed=0, execution=Execution(workers=2))
    assert opened == [2] and len(batches) > 5
    inline = audit_canaries(get_mechanism("laplace"), game=game, seed=0)
    assert on_dask.lower_bound.epsilon == inline.lower_bound.epsilon and opened == [2]


def test_the_planned_look_certifies_every_run_as_the_fixed_game_does(monkeypatch):
    from dpaudit.attacks.canary import both_directions
    from dpaudit.audit.audits import sequential_runs
    from dpaudit.audit.audits.sequential_trials import LAST_LOOK_SHARE
    from dpaudit.audit.estimators.certify import certify_best

    kept, take = [], sequential_runs._AllRuns.take
    monkeypatch.setattr(sequential_runs._AllRuns, "take", lambda self: (kept.append(self), take(self))[1])
    res = audit_canaries(get_mechanism("laplace"), game=MultiRun(2000, sequential=True, give_up=False), seed=4)
    assert res.attack["stopped"] == "budget of runs" and len(kept) == 1
    runs = sequential_runs._joined(kept[0].batches)
    assert runs.size == 2000
    look = Bound(confidence=1 - BETA * LAST_LOOK_SHARE)
    rng = np.random.default_rng(np.random.SeedSequence([4, sequential_runs.LOOK_KEY]))  # the ties are broken at random
    expected = certify_best(both_directions(runs), MultiRun(2000), look, delta=0.0, rng=rng)[1]
    assert kept[0].looked.epsilon == pytest.approx(expected.epsilon)
    assert res.lower_bound.epsilon >= expected.epsilon and res.lower_bound.confidence == 1 - BETA


def test_a_game_stopped_before_its_budget_takes_no_planned_look(monkeypatch):
    from dpaudit.audit.audits import sequential_runs

    kept, take = [], sequential_runs._AllRuns.take
    monkeypatch.setattr(sequential_runs._AllRuns, "take", lambda self: (kept.append(self), take(self))[1])
    res = audit_canaries(_tenth_noise(), game=MultiRun(10_000, sequential=True), seed=0)
    assert res.attack["stopped"] == "violation certified" and kept == []
    assert "planned" not in res.lower_bound.method
