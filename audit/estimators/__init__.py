"""Estimators: evidence in, an ε lower bound (`LowerBound`) with its confidence out.

The public surface takes `confidence`; the building blocks in the modules
(`clopper_pearson.rate_upper_bound`, `rate_ratio.kov_ratio_bounds`,
`bands.rate_band`, ...) take the failure probability β = 1 − confidence
of the one interval they compute, as their sources state them.
"""

from dpaudit.attacks.held_out_counts import HeldOutCounts
from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.clopper_pearson import epsilon_from_rates
from dpaudit.audit.estimators.gdp import GDP_ASSUMPTION, gdp_from_counts, gdp_lower_bound
from dpaudit.audit.estimators.held_out import held_out_lower_bound
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.one_run.binomial import one_run_lower_bound, one_run_p_value
from dpaudit.audit.estimators.one_run.fdp import one_run_fdp_lower_bound
from dpaudit.audit.estimators.thresholds import (
    Bonferroni,
    DominatingPair,
    SimultaneousBands,
    Split,
    ThresholdStrategy,
    threshold_lower_bound,
)

__all__ = [
    "GDP_ASSUMPTION",
    "Bonferroni",
    "DominatingPair",
    "HeldOutCounts",
    "LowerBound",
    "Observations",
    "SimultaneousBands",
    "Split",
    "ThresholdStrategy",
    "epsilon_from_rates",
    "gdp_from_counts",
    "gdp_lower_bound",
    "held_out_lower_bound",
    "one_run_fdp_lower_bound",
    "one_run_lower_bound",
    "one_run_p_value",
    "threshold_lower_bound",
]
