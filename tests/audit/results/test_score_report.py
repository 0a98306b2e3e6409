"""Score reports draw ±inf scores (accepted by Observations) in the end bins instead of failing, and names as written."""

import dataclasses
import io

import numpy as np
from dpaudit.attacks.games import MultiRun
from dpaudit.attacks.observations import Observations
from dpaudit.audit.audits.canaries import audit_scores
from dpaudit.audit.estimators.certify import Bound
from dpaudit.audit.results.score_report import score_figure


def test_infinite_scores_are_drawn_in_the_end_bins():
    rng = np.random.default_rng(0)
    scores = np.concatenate([rng.normal(2.0, 1.0, 200), rng.normal(size=200)])
    scores[0], scores[-1] = np.inf, -np.inf
    obs = Observations(scores=scores, truth=np.arange(400) < 200)
    result = audit_scores(obs, game=MultiRun(), bound=Bound("threshold", delta=1e-5))
    figure = score_figure(result)
    counts = sum(patch.get_height() for patch in figure.axes[0].patches)
    assert counts == 400


def test_a_mechanism_name_with_dollar_signs_is_drawn_as_written_not_as_mathtext():
    rng = np.random.default_rng(0)
    obs = Observations(scores=rng.normal(size=200), truth=np.arange(200) < 100)
    result = dataclasses.replace(audit_scores(obs, game=MultiRun(), bound=Bound("threshold")), mechanism="a $\\frac{$ b")
    figure = score_figure(result)
    figure.savefig(io.BytesIO(), format="png")
    assert figure.get_suptitle() == "dpaudit multi-run: a $\\frac{$ b"
