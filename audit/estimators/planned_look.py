"""The look planned at the end of a sequential audit's budget: a fixed-sample bound at a share of β of its own.

A confidence sequence pays for holding at every time (about 1.6 times the
fixed-n interval's width where it is tuned, `sequential.BetaPrior.tuned`).
The one sample size known before any draw, the end of the last epoch's
planned draws, can be judged by a fixed-sample interval instead, at a share
of β kept for it: Clopper–Pearson on the held-out counts of the test the
last epoch chose on its own selection sample (the fixed audit's interval).

Why it stays valid whenever the audit stops: let E be the event that the
Clopper–Pearson bound of the planned sample, were it drawn in full, exceeds
the true ε. Its draws are fresh (the last epoch's own seed), its size is
fixed before them (given the earlier epochs, whose draws are independent of
them), and its test is fixed before them, so P(E) ≤ β_look. The look is
reported only when the planned sample was drawn in full, where it equals
that bound; an audit that stops earlier (a certified violation, a stop
rule, Ctrl-C) reports its sequences only. By the union bound with the
sequences' share, the reported bound fails with probability ≤ β at any
stopping time. This is the "planned final analysis" of group-sequential
designs (alpha spending: Lan and DeMets, "Discrete sequential boundaries for
clinical trials", Biometrika 1983) with the always-valid part given by the
sequences.
"""

from __future__ import annotations

import dataclasses

from dpaudit.audit.estimators.clopper_pearson import epsilon_from_rates, epsilon_lower_bound, rate_upper_bound
from dpaudit.audit.estimators.sequential import TwoRatesSequence

__all__ = ["PlannedLook"]


@dataclasses.dataclass(frozen=True)
class PlannedLook:
    """The fixed-sample look at `draws` held-out outputs per dataset, at `beta` of its own (β/2 to each rate)."""

    beta: float
    draws: int

    def epsilon(self, false_positives: int, n0: int, false_negatives: int, n1: int, delta: float) -> float:
        """Return the Clopper–Pearson ε lower bound of the planned sample's counts (sound only once it is drawn in full)."""
        return float(epsilon_lower_bound(false_positives, n0, false_negatives, n1, delta=delta, beta=self.beta))

    def reachable(self, sequences: TwoRatesSequence, delta: float) -> float:
        """Return the ε this look could certify were the rates at the sequences' lower ends (a rule for giving up only)."""
        n = max(self.draws, 1)
        fpr = rate_upper_bound(sequences.fpr.lower * n, n, self.beta / 2.0)
        fnr = rate_upper_bound(sequences.fnr.lower * n, n, self.beta / 2.0)
        return float(epsilon_from_rates(fpr, fnr, delta))
