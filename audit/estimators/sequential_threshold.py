"""A membership game's threshold test, fixed on selection runs, and its errors on later runs for confidence sequences.

The test "guess IN when sign·score ≥ t" (sign +1: members score higher,
−1: lower) is chosen on runs of its own (`choose_test`), then judged on
runs played after it was fixed (`FixedTest.errors`): its false positives
among the OUT runs and false negatives among the IN runs. Given the runs'
memberships, which each game decides before its runs are played and
independently of them, the OUT runs' errors are i.i.d. Bernoulli(FPR) and
the IN runs' i.i.d. Bernoulli(FNR), in the order the runs are played, so
the beta-binomial confidence sequences of `sequential.TwoRatesSequence`
bound both rates at every look at once.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from dpaudit.attacks.canary import DIRECTIONS
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.clopper_pearson import epsilon_objective, rate_upper_bound
from dpaudit.audit.estimators.sequential import fixed_level
from dpaudit.audit.estimators.thresholds import error_counts, tail_candidates

__all__ = ["FixedTest", "choose_test"]


@dataclasses.dataclass(frozen=True)
class FixedTest:
    """A threshold test fixed before the runs it is judged on: its direction, its threshold, and the rates it expects.

    `fpr_guess` and `fnr_guess` are the selection runs' rates, smoothed away
    from 0 and 1: the centres of the confidence sequences' priors.
    """

    sign: float
    threshold: float
    fpr_guess: float = 0.5
    fnr_guess: float = 0.5
    arm: int = 0
    """The canary whose scores the test reads, among the arms of a ladder played in the same runs."""

    @property
    def direction(self) -> str:
        """Return the direction in words (`canary.DIRECTIONS`)."""
        return DIRECTIONS[0 if self.sign > 0 else 1]

    def describe(self) -> str:
        """Return the test in words, e.g. "IN when score ≥ 1.2"."""
        return f"IN when score {'≥' if self.sign > 0 else '≤'} {self.sign * self.threshold:.6g}"

    def errors(self, played: Observations | tuple[Observations, ...]) -> tuple[int, int, int, int]:
        """Return (false positives, OUT runs, false negatives, IN runs) of the test on runs played (its arm's scores)."""
        obs = played[self.arm] if isinstance(played, tuple) else played
        scores = self.sign * obs.scores
        out, members = scores[~obs.truth], scores[obs.truth]
        return int(np.sum(out >= self.threshold)), int(out.size), int(np.sum(members < self.threshold)), int(members.size)


def _smoothed(errors: float, n: int) -> float:
    """Return the rate (errors + ½)/(n + 1): a prior's centre, never 0 or 1."""
    return (errors + 0.5) / (n + 1.0)


def choose_test(selection: Observations | tuple[Observations, ...], held_out: int, beta: float, delta: float) -> FixedTest:
    """Return the test that would certify the largest ε on `held_out` later runs, judged on the `selection` runs alone.

    Every arm of a ladder (a tuple: one `Observations` per canary of the
    same runs), both directions and the tail candidates of each
    (`tail_candidates`, and the midpoints between them) are
    ranked by the Clopper–Pearson bound their selection rates would get on
    `held_out` runs (half IN, half OUT) at the level whose fixed interval is
    as wide as the confidence sequence at β (`fixed_level`), so the choice
    fits the interval that will judge it; among equal ones, the middle of
    their stretch (a gap between the classes is split in its middle). It reads the selection runs only:
    sound for any runs judged after it. Without both classes among the
    selection runs: members higher, threshold at their median.
    """
    arms = selection if isinstance(selection, tuple) else (selection,)
    if arms[0].n_in == 0 or arms[0].n_out == 0:
        return FixedTest(1.0, float(np.median(arms[0].scores)) if arms[0].size else 0.0)
    level = 2.0 * fixed_level(beta / 2.0)
    tests = [_best_of_arm(obs, arm, max(held_out / 2.0, 1.0), level, delta) for arm, obs in enumerate(arms)]
    return max(tests, key=lambda scored: scored[0])[1]


def _with_midpoints(candidates: np.ndarray) -> np.ndarray:
    """Return the sorted candidates with the midpoint of each finite neighbouring pair between them."""
    middle = (candidates[:-1] + candidates[1:]) / 2.0
    return np.unique(np.concatenate([candidates, middle[np.isfinite(middle)]]))


def _best_of_arm(obs: Observations, arm: int, half: float, level: float, delta: float) -> tuple[float, FixedTest]:
    """Return the best test on one arm's selection runs, with the bound it predicts on `half` OUT and `half` IN runs."""
    best: tuple[float, FixedTest] = (-np.inf, FixedTest(1.0, float(np.median(obs.scores)), arm=arm))
    for sign in (1.0, -1.0):
        signed = Observations(scores=sign * obs.scores, truth=obs.truth)
        candidates = _with_midpoints(tail_candidates(signed.scores))
        fp, n0, fn, n1 = error_counts(signed, candidates)
        predicted = epsilon_objective(rate_upper_bound(fp * (half / n0), half, level / 2.0),
                                      rate_upper_bound(fn * (half / n1), half, level / 2.0), delta)
        tied = np.flatnonzero(predicted == predicted.max())
        i = int(tied[tied.size // 2])  # the middle of the best stretch: away from the selection's extreme scores
        if predicted[i] > best[0]:
            best = (float(predicted[i]), FixedTest(sign, float(candidates[i]), _smoothed(fp[i], n0), _smoothed(fn[i], n1), arm))
    return best
