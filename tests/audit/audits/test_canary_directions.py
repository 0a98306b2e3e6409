"""The multi-run canary game looks both ways and plays no canary that moves nothing (issue 47).

Each broken mechanism has half the noise its claim needs (ε 1 on the pair
the game plays, claim 0.5); before, the game certified 0.0 on it: a member
that lowers the output, or a box canary that is the record adding nothing
to a sum (or the base records' value, for a mean). The same mechanisms at
twice the noise keep their claim and must stay unflagged, and so must one
that ignores its input.
"""

import numpy as np
import pytest
from dpaudit.attacks.canary import DIRECTIONS
from dpaudit.attacks.canary_design import BASE_RECORDS
from dpaudit.attacks.games import MultiRun
from dpaudit.audit.audits.canaries import audit_canaries, audit_scores
from dpaudit.mechanisms import blackbox
from dpaudit.mechanisms.records import BoxRecords
from scipy.stats import binom

CLAIM = 0.5
RUNS = 2000
BOX = BoxRecords(-1.0, 0.0)


def _max_false_positives(n: int, beta: float) -> int:
    # Under soundness the count of flagged seeds is at most Binomial(n, β); allow its 99.9% quantile.
    return int(binom.ppf(0.999, n, beta))


def _mechanism(kind: str, true_epsilon: float):
    """Return a mechanism of ε `true_epsilon` on the pair its game plays, claiming CLAIM."""
    scale = 1.0 / true_epsilon
    if kind == "lowering pair":
        def lowering(d, rng, size):
            return -float(np.sum(d)) + rng.laplace(0.0, scale, size)
        return blackbox(lowering, epsilon=CLAIM, default_pair=([0.0], [0.0, 1.0]))
    releases = {
        "box sum": (lambda d: float(np.sum(d)), 1.0),
        "box count": (lambda d: float(len(d)), 1.0),
        # The mean of BASE_RECORDS records at the near end and the canary at the far end moves by 1/(BASE_RECORDS + 1).
        "box mean": (lambda d: float(np.mean(d)), 1.0 / (BASE_RECORDS + 1)),
    }
    release, sensitivity = releases[kind]

    def noisy(d, rng, size):
        return release(d) + rng.laplace(0.0, scale * sensitivity, size)
    return blackbox(noisy, epsilon=CLAIM, records=BOX, name=kind.replace(" ", "_"))


KINDS = ("lowering pair", "box sum", "box count", "box mean")


@pytest.mark.parametrize("kind", KINDS)
def test_a_mechanism_with_half_its_noise_is_flagged_on_every_seed(kind):
    mech = _mechanism(kind, true_epsilon=2 * CLAIM)
    for seed in range(3):
        result = audit_canaries(mech, game=MultiRun(RUNS), seed=seed)
        assert result.verdict == "violation", (kind, seed, result.lower_bound.epsilon)
        assert result.lower_bound.epsilon <= 2 * CLAIM
        assert result.attack["direction"] in DIRECTIONS and result.attack["directions_certified"].startswith("both")


def test_a_member_that_lowers_the_output_is_found_in_the_lower_direction():
    result = audit_canaries(_mechanism("lowering pair", true_epsilon=2 * CLAIM), game=MultiRun(RUNS), seed=0)
    assert result.attack["direction"] == "members score lower"
    # The kept scores are as scored (members lower): audited again as saved scores (higher = member), they
    # certify nothing, as no choice made on them is reused.
    assert result.observations.in_scores.mean() < result.observations.out_scores.mean()
    assert audit_scores(result.observations, game=MultiRun(), claim=result.claim, seed=0).verdict == "consistent"


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_mechanisms_at_their_claim_are_not_flagged(kind):
    mech, seeds = _mechanism(kind, true_epsilon=CLAIM), 6
    flagged = sum(audit_canaries(mech, game=MultiRun(RUNS), seed=s).verdict == "violation" for s in range(seeds))
    assert flagged <= _max_false_positives(seeds, 0.05)


def test_a_mechanism_that_ignores_its_input_certifies_zero_in_both_directions():
    def blind(d, rng, size):
        return rng.laplace(0.0, 1.0, size)
    seeds = 20
    for mode, mech in (("pair", blackbox(blind, epsilon=CLAIM, default_pair=([0.0], [0.0, 1.0]))),
                       ("fixed", blackbox(blind, epsilon=CLAIM, records=BOX))):
        positive = sum(audit_canaries(mech, game=MultiRun(300), canary=mode, seed=s).lower_bound.epsilon > 0
                       for s in range(seeds))
        assert positive <= _max_false_positives(seeds, 0.05), mode
