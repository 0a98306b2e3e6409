"""How far one added record moves MST's selection scores when MST is told the true number of rows, INSIDE the smartnoise-synth environment.

Run with the environment's Python (`dpaudit env list` prints its folder):
`PYTHON mechanisms/scripts/mst_known_total.py [categories] [rows_per_category] [seed]`.
Prints one JSON object: per pair of columns, how much its score moves from D to D' (D with the target
added) on the same noisy one-way measurements, with the estimate MST's `select` makes
(`mirror_descent(..., known_total=float(total))`, total the dataset's own row count) and, beside it, with
one total for both datasets (what a public total would give).

MST's selection scores a pair by ‖x − x̂‖₁ and draws with the exponential mechanism at sensitivity 1
(`exponential_mechanism(wgts, epsilon, sensitivity=1.0)`): under add-remove, adding a record moves x by 1
in one cell, and x̂, which MST scales to the true total, by the new total's share of every cell, so the
score can move by up to 2(1 − x̂_t/total). The dataset: columns 0 and 1 equal, each of `categories`
categories held by `rows_per_category` records (so x̂ of the pair is the uniform table and x its
diagonal), column 2 a bit independent of them; the target is the last category of every column.
This is a replay (the same noise on both datasets), not a certificate.
"""

import itertools
import json
import sys

import numpy as np


def _dataset(categories, per):
    """Return the base records (n, 3) and the target (3,)."""
    first = np.repeat(np.arange(categories), per)
    bit = np.arange(len(first)) % 2
    return np.column_stack([first, first, bit]), np.array([categories - 1, categories - 1, 1])


def moves(categories=10, per=100, seed=0):
    """Return, per pair, the move of MST's selection score from D to D' with the true totals and with one total."""
    from mbi import Dataset, Domain, estimation, marginal_oracles
    from snsynth.mst.mst import MSTSynthesizer
    from snsynth.utils import cdp_rho

    base, target = _dataset(categories, per)
    names, cards = ["col0", "col1", "col2"], [categories, categories, 2]
    domain = Domain(names, cards)
    d0, d1 = (Dataset({c: rows[:, i] for i, c in enumerate(names)}, domain) for rows in (base, np.vstack([base, target])))
    np.random.seed(seed)
    synth = MSTSynthesizer(epsilon=1.0, delta=1e-2)
    log1 = synth.measure(d0, [(c,) for c in names], np.sqrt(3 / (2 * cdp_rho(1.0, 1e-2))))

    def score(data, total):
        est = estimation.mirror_descent(domain, log1, known_total=float(total), iters=1000,
                                        marginal_oracle=marginal_oracles.message_passing_stable)
        return {a + "," + b: float(np.abs(np.asarray(data.project([a, b]).datavector())
                                          - np.asarray(est.project([a, b]).datavector())).sum())
                for a, b in itertools.combinations(names, 2)}

    n = len(base)
    before, after, public = score(d0, n), score(d1, n + 1), score(d1, n)
    return {"rows": n, "sensitivity_mst_assumes": 1.0,
            "move_with_true_totals": {k: after[k] - before[k] for k in before},
            "move_with_one_total": {k: public[k] - before[k] for k in before}}


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:4]]
    print(json.dumps(moves(*args), indent=1))
