"""The multi-run game's scores have one law whether dpaudit's runs train one at a time or side by side.

A two-sample Kolmogorov–Smirnov test on independent runs (other seeds):
at level α it rejects when D > √(−ln(α/2)/2)·√((n + m)/(nm)), so the
tolerance comes from the sample sizes alone. The score is a bias
coordinate's displacement, which every step's data gradients move. The
same test rejects runs side by side that skip clipping: it could fail.
"""

import math

import numpy as np
import pytest
from dpaudit.attacks.dpsgd.canaries import make_canaries
from dpaudit.attacks.dpsgd.game import DPSGDGame, play_multi_run, play_multi_run_group, resolve_trainer
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from scipy import stats

pytest.importorskip("torch")
pytestmark = pytest.mark.usefixtures("one_torch_thread")

RUNS, GROUP, ALPHA = 200, 50, 1e-3
MEMBERS = np.arange(RUNS) % 2 == 0


def _game(model, bug=None):
    """Return a black-box game of a Dirac canary on a bias coordinate (Poisson sampling, 10 steps)."""
    config = DPSGDConfig(model=model, noise_multiplier=0.5, sample_rate=0.2, steps=10, bug=bug)
    trainer = resolve_trainer(config, "dpaudit")
    theta0 = trainer.model.initial(np.random.default_rng(0)).cpu().numpy()
    canaries = make_canaries("dirac", 1, model=trainer.model, data=trainer.data, theta0=theta0, clip_norm=1.0,
                             rng=np.random.default_rng(1), target="bias")
    return DPSGDGame(config, "dpaudit", canaries, theta0, threat="black-box")


def _one_at_a_time(game, seed, runs=RUNS):
    return np.array([play_multi_run(game, i, MEMBERS[i], seed)[0] for i in range(runs)])


def _side_by_side(game, seed, runs=RUNS):
    groups = [play_multi_run_group(game, range(start, start + GROUP), MEMBERS, seed) for start in range(0, runs, GROUP)]
    return np.concatenate(groups)[:, 0]


def _tolerance(n, m, alpha):
    """Return the two-sample KS statistic's critical value at level alpha (asymptotic, Smirnov)."""
    return math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))


def _statistics(first, second):
    """Return the KS statistic of the IN runs and of the OUT runs."""
    return [stats.ks_2samp(first[arm], second[arm]).statistic for arm in (MEMBERS, ~MEMBERS)]


@pytest.mark.parametrize("model", ["logreg", "mlp"])
def test_scores_of_runs_side_by_side_have_the_law_of_runs_one_at_a_time(model):
    alone = _one_at_a_time(_game(model), seed=1)
    tolerance = _tolerance(RUNS // 2, RUNS // 2, ALPHA / 2)  # two arms, α/2 each
    assert max(_statistics(alone, _side_by_side(_game(model), seed=2))) < tolerance
    assert max(_statistics(alone, _side_by_side(_game(model, bug="no-clipping"), seed=2))) > tolerance


def test_on_the_same_streams_the_scores_agree_to_rounding():
    game = _game("mlp")
    np.testing.assert_allclose(_side_by_side(game, 3, runs=GROUP), _one_at_a_time(game, 3, runs=GROUP), rtol=1e-4)
