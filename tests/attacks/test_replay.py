"""Record and replay: every sampling method is intercepted, a replay on the same data changes nothing, and each
kind of difference between D and D′ is the finding it should be."""

import numpy as np
import pytest
from dpaudit.attacks.replay import DataDerivedShape, Divergence, NotReplayable, Recording, Replaying, replay_pair
from dpaudit.attacks.replay.draws import SAMPLING_METHODS
from dpaudit.mechanisms import blackbox

D0, D1 = [0.2, 0.9, 0.4], [0.2, 0.9, 0.4, 1.0]


def _replay(fn, d0=D0, d1=D1, seed=0):
    return replay_pair(blackbox(fn, epsilon=1.0), d0, d1, seed=np.random.SeedSequence(seed))


def test_every_public_sampling_method_of_numpy_is_intercepted():
    public = {m for m in dir(np.random.Generator) if not m.startswith("_")} - {"bit_generator", "spawn"}
    assert set(SAMPLING_METHODS) == public


def _every_method(data, rng):
    x = np.asarray(data, float)
    out = [rng.laplace(x.sum(), 1.0), rng.normal(0, 2, size=2), rng.exponential(1.0), rng.geometric(0.3),
           rng.integers(0, 10, size=3), rng.random(), rng.uniform(-1, 1), rng.gumbel(0, 1), rng.binomial(5, 0.5),
           rng.poisson(2.0), rng.permutation(x)[:1], rng.choice(x, 2), rng.standard_normal(2), rng.standard_exponential(),
           rng.standard_gamma(2.0), rng.standard_t(3), rng.logistic(), rng.beta(1, 2), rng.multinomial(3, [0.5, 0.5]),
           rng.dirichlet([1, 1]), rng.multivariate_normal([0, 0], np.eye(2))]
    y = x.copy()
    rng.shuffle(y)
    out.append(y)
    return np.concatenate([np.ravel(np.asarray(v, float)) for v in out])


def test_a_replay_on_the_same_data_returns_the_same_release_and_finds_nothing():
    r = _replay(_every_method, D0, D0)
    assert r.findings == ()
    np.testing.assert_array_equal(r.release0, r.release1)
    assert len(r.tape) == 22


def test_a_recorded_draw_is_what_numpy_draws_and_a_replay_answers_it_with_the_same_noise():
    rec = Recording(np.random.PCG64(3))
    first = rec.laplace(2.0, 1.5, size=4)
    np.testing.assert_array_equal(first, np.random.Generator(np.random.PCG64(3)).laplace(2.0, 1.5, size=4))
    rep = Replaying(rec.tape, np.random.PCG64(9))
    np.testing.assert_allclose(rep.laplace(5.0, 1.5, size=4), first + 3.0)
    assert isinstance(rep, np.random.Generator) and rep.divergences == []


def test_a_scale_that_depends_on_the_data_is_a_divergence_of_law():
    r = _replay(lambda d, rng: np.clip(d, 0, 1).sum() / len(d) + rng.laplace(0, 1 / len(d)))
    [div] = r.divergences()
    assert isinstance(div, Divergence) and div.kind == "law" and "scale" in div.recorded


def test_a_draw_taken_only_on_one_dataset_is_a_divergence_of_count_and_order_a_divergence_of_method():
    def branchy(d, rng):
        return rng.laplace() if len(d) > 3 else rng.normal()

    assert [d.kind for d in _replay(branchy).divergences()] == ["method"]
    extra = _replay(lambda d, rng: sum(rng.laplace() for _ in d))
    assert [d.kind for d in extra.divergences()] == ["count"]


def test_the_move_of_a_laplace_release_is_priced_at_move_over_scale_and_a_gaussian_one_as_its_mu():
    laplace = _replay(lambda d, rng: np.clip(d, 0, 1).sum() + rng.laplace(0, 0.5)).sensitivity()
    assert laplace.pure_epsilon == pytest.approx(1.0 / 0.5) and laplace.gaussian_mu == 0.0
    gauss = _replay(lambda d, rng: rng.normal(np.clip(d, 0, 1).sum(), 4.0)).sensitivity()
    assert gauss.gaussian_mu == pytest.approx(0.25) and gauss.shifts[0].where == "argument"


def test_labels_from_the_data_are_a_data_derived_shape():
    r = _replay(lambda d, rng: {k: 1 + rng.laplace() for k in np.unique(d)}, ["a", "b"], ["a", "b", "c"])
    assert isinstance(r.shape(), DataDerivedShape)


def test_noise_from_numpy_s_global_state_or_python_s_random_is_named_not_replayable():
    with pytest.raises(NotReplayable, match="numpy's global random state"):
        _replay(lambda d, rng: np.sum(d) + np.random.laplace())
    import random

    with pytest.raises(NotReplayable, match="Python's random module"):
        _replay(lambda d, rng: np.sum(d) + random.random())
    with pytest.raises(NotReplayable, match="entropy"):
        _replay(lambda d, rng: np.sum(d) + np.random.default_rng().laplace())


def test_noise_from_a_source_no_watch_names_is_refused_when_d_replayed_on_itself_comes_back_different():
    hidden = np.random.Generator(np.random.PCG64(7))  # a generator of its own, seeded once outside the run: no watch sees it

    def own_noise(d, rng):
        return float(np.clip(d, 0, 1).sum()) + hidden.laplace(0.0, 1.0)

    mech = blackbox(own_noise, epsilon=1.0)
    assert replay_pair(mech, D0, D1, seed=np.random.SeedSequence(0)).sensitivity() is not None  # read as the data's move
    with pytest.raises(NotReplayable, match="a source besides the rng it is handed"):
        replay_pair(mech, D0, D1, seed=np.random.SeedSequence(0), itself=True)
    fine = replay_pair(blackbox(lambda d, rng: float(np.sum(d)) + rng.laplace(0.0, 1.0), epsilon=1.0), D0, D1,
                       seed=np.random.SeedSequence(0), itself=True)
    assert fine.divergences() == ()


def test_a_move_laid_over_a_standard_normal_the_program_scales_itself_is_not_priced_at_scale_one():
    r = _replay(lambda d, rng: float(np.sum(d)) + 5.0 * rng.standard_normal(), D0, [0.2, 0.9, 1.4])
    found = r.sensitivity()
    assert found.l1 == pytest.approx(1.0, abs=1e-12) and found.unpriced == ("standard_normal",) and found.gaussian_mu == 0.0
    priced = _replay(lambda d, rng: float(np.sum(d)) + rng.normal(0.0, 5.0), D0, [0.2, 0.9, 1.4]).sensitivity()
    assert priced.unpriced == () and priced.gaussian_mu == pytest.approx(1.0 / 5.0, rel=1e-9)


@pytest.mark.parametrize("fn, priced", [
    (lambda d, rng: float(np.sum(d)) + rng.laplace(0.0, 2.0), True),
    (lambda d, rng: np.array([np.sum(d) + rng.laplace(0.0, 1.0), np.sum(d) + rng.laplace(0.0, 1.0)]), True),
    (lambda d, rng: (float(np.sum(d)) + rng.laplace(0.0, 2.0)) / len(d), False),  # released noise of scale 2/n, not 2
    (lambda d, rng: float(np.sum(d)) + 3.0 * rng.laplace(0.0, 1.0), False),  # released noise of scale 3, not 1
])
def test_a_release_move_is_priced_by_the_noise_laid_under_it_only_when_it_moves_one_for_one_with_it(fn, priced):
    found = _replay(fn, D0, [0.2, 0.9, 1.4]).sensitivity()
    assert found.l1 > 0 and (found.unpriced == ()) is priced and (found.pure_epsilon > 0) is priced
