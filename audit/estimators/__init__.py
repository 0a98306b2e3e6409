"""Estimators: observations in, an ε lower bound (`LowerBound`) with its confidence out."""

from dpaudit.attacks.observations import Observations
from dpaudit.audit.estimators.bands import rate_band
from dpaudit.audit.estimators.clopper_pearson import epsilon_from_rates, epsilon_lower_bound, rate_upper_bound
from dpaudit.audit.estimators.gdp import GDP_ASSUMPTION, gdp_epsilon, gdp_from_counts, gdp_lower_bound, mu_lower_bound
from dpaudit.audit.estimators.lower_bound import LowerBound
from dpaudit.audit.estimators.one_run_binomial import one_run_epsilon, one_run_lower_bound, one_run_p_value
from dpaudit.audit.estimators.one_run_fdp import one_run_fdp_lower_bound, one_run_fdp_mu
from dpaudit.audit.estimators.rate_ratio import kov_ratio_bounds, ratio_epsilon_bound
from dpaudit.audit.estimators.thresholds import (
    Bonferroni,
    SimultaneousBands,
    Split,
    ThresholdStrategy,
    threshold_lower_bound,
)

__all__ = [
    "GDP_ASSUMPTION",
    "Bonferroni",
    "LowerBound",
    "Observations",
    "SimultaneousBands",
    "Split",
    "ThresholdStrategy",
    "epsilon_from_rates",
    "epsilon_lower_bound",
    "gdp_epsilon",
    "gdp_from_counts",
    "gdp_lower_bound",
    "kov_ratio_bounds",
    "mu_lower_bound",
    "one_run_epsilon",
    "one_run_fdp_lower_bound",
    "one_run_fdp_mu",
    "one_run_lower_bound",
    "one_run_p_value",
    "rate_band",
    "rate_upper_bound",
    "ratio_epsilon_bound",
    "threshold_lower_bound",
]
