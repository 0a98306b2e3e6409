"""Theory: the upper bounds that an audit's lower bound is set beside.

Each function names its theorem; `upper_bound(event, delta=...)` picks the
tightest one that applies to a mechanism's dp_accounting event.
"""

from dpaudit.audit.theory.amplification import (
    poisson_subsampled,
    shuffled_epsilon,
    shuffling_condition,
    smith_subsampled,
)
from dpaudit.audit.theory.composition import (
    advanced_composition,
    basic_composition,
    kov_closed_form,
    kov_delta,
    kov_epsilon,
    kov_heterogeneous,
    pld_composition_epsilon,
    rdp_composition_epsilon,
)
from dpaudit.audit.theory.conversions import (
    pure_to_rdp,
    pure_to_zcdp,
    rdp_to_dp,
    zcdp_delta,
    zcdp_to_dp,
    zcdp_to_dp_simple,
)
from dpaudit.audit.theory.group import group_epsilon, group_privacy
from dpaudit.audit.theory.profiles import (
    classical_gaussian_sigma,
    epsilon_delta_tradeoff,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_sigma,
    gdp_delta,
    gdp_epsilon,
    gdp_tradeoff,
    laplace_delta,
    laplace_epsilon,
    randomized_response_delta,
    randomized_response_epsilon,
)
from dpaudit.audit.theory.upper_bound import UpperBound, upper_bound

__all__ = [
    "UpperBound",
    "advanced_composition",
    "basic_composition",
    "classical_gaussian_sigma",
    "epsilon_delta_tradeoff",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_sigma",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_tradeoff",
    "group_epsilon",
    "group_privacy",
    "kov_closed_form",
    "kov_delta",
    "kov_epsilon",
    "kov_heterogeneous",
    "laplace_delta",
    "laplace_epsilon",
    "pld_composition_epsilon",
    "poisson_subsampled",
    "pure_to_rdp",
    "pure_to_zcdp",
    "randomized_response_delta",
    "randomized_response_epsilon",
    "rdp_composition_epsilon",
    "rdp_to_dp",
    "shuffled_epsilon",
    "shuffling_condition",
    "smith_subsampled",
    "upper_bound",
    "zcdp_delta",
    "zcdp_to_dp",
    "zcdp_to_dp_simple",
]
