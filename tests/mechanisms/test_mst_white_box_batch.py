"""MST's white-box batch path (mechanisms/scripts/mst_white_box.py) against the library it stands in for, inside its environment.

Marked `libraries`: the "smartnoise-synth-1.0.8" environment is built on first use. The batch path replaces
only mbi's `mirror_descent` in MST's selection (the estimate its scores are measured against) by the same
algorithm in numpy, so the check is that the two give the same estimate on the same measurements, and that a
batch of scores has the mean and spread a log-likelihood ratio of that mechanism must have.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from dpaudit.mechanisms import get_mechanism
from dpaudit.mechanisms.adapters.synth import ENVIRONMENT
from dpaudit.mechanisms.environments import environment_python

SCRIPTS = Path(__file__).resolve().parents[2] / "mechanisms" / "scripts"
COMPARE = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import mst_white_box
from mbi import Domain, LinearMeasurement, estimation, marginal_oracles
rng = np.random.default_rng(0)
cards, total, sigma = [2, 3, 2], 50.0, 4.0
ys = [rng.normal([20.0] * k, sigma, size=(2, k)) for k in cards]
ours = mst_white_box.one_way_estimate(ys, [sigma] * 3, total)
gap = 0.0
for run in range(2):
    log = [LinearMeasurement(y[run], ("c%d" % c,), sigma) for c, y in enumerate(ys)]
    domain = Domain(["c0", "c1", "c2"], cards)
    est = estimation.mirror_descent(domain, log, known_total=total, iters=1000,
                                    marginal_oracle=marginal_oracles.message_passing_stable)
    for c in range(3):
        gap = max(gap, float(np.max(np.abs(np.asarray(est.project(["c%d" % c]).datavector()) - ours[c][run]))))
print(json.dumps({"gap": gap}))
"""


@pytest.mark.libraries
def test_the_numpy_estimate_is_mbis_mirror_descent_on_the_same_one_way_measurements():
    python = environment_python(ENVIRONMENT.name)
    out = subprocess.run([str(python), "-c", COMPARE, str(SCRIPTS)], capture_output=True, text=True, check=True, timeout=600)
    gap = json.loads(out.stdout.strip().splitlines()[-1])["gap"]
    assert gap < 1e-6  # counts of order 10: the same algorithm in float64, up to the order of its sums


@pytest.mark.libraries
def test_a_batch_of_white_box_scores_is_a_log_likelihood_ratio_on_each_dataset():
    mech = get_mechanism("synth_mst_white_box", epsilon=1.0, delta=1e-2, rows=200)
    d0, d1 = mech.default_pair
    n = 150
    s0, s1 = (mech.sample(d, n, np.random.default_rng(i)) for i, d in enumerate((d0, d1)))
    # An exact log-likelihood ratio L of D1 against D0 has E_D1[exp(-L)] = 1 and E_D0[exp(L)] = 1, so its means
    # straddle 0: E_D0[L] ≤ 0 ≤ E_D1[L]; with a spread under 1 each mean lies within 4 standard errors of its side.
    se = 4 * max(s0.std(), s1.std()) / np.sqrt(n)
    assert s0.mean() < se and s1.mean() > -se and s1.mean() - s0.mean() > 0
    assert abs(np.mean(np.exp(s0)) - 1) < 4 * np.exp(s0).std() / np.sqrt(n)
