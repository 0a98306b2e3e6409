"""`pure-to-renyi`: the formulas of its docstring against direct evaluation and numerical integration.

Two evaluations of one formula in different arithmetic agree to REL
(rounding); a quadrature agrees to QUAD (its error estimate is far below).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dpaudit.audit.theory.conversions import pure_to_rdp, pure_to_zcdp
from dpaudit.experiments.pure_to_renyi import ALPHAS, EPSILONS, bernoulli_renyi, laplace_renyi

REL = 1e-9
QUAD = 1e-8
ORDERS = [1.05, 1.5, 2.0, 7.0, 30.0]


@pytest.mark.parametrize(("p", "q"), [(0.7, 0.3), (0.9, 0.2), (0.51, 0.49)])
def test_bernoulli_renyi_is_the_definition(p, q):
    for a in ORDERS:
        direct = math.log(p**a * q ** (1 - a) + (1 - p) ** a * (1 - q) ** (1 - a)) / (a - 1)
        assert bernoulli_renyi(p, q, np.array([a]))[0] == pytest.approx(direct, rel=REL)


@pytest.mark.parametrize("eps", EPSILONS)
def test_laplace_renyi_is_mironovs_formula_by_quadrature(eps):
    # D_α(Lap(0, 1/ε) ‖ Lap(1, 1/ε)) = log ∫ p^α q^{1−α} /(α − 1), with p^α q^{1−α} = (ε/2) e^{−ε(α|x| + (1−α)|x − 1|)},
    # integrated piecewise at the kinks 0 and 1; beyond ±60/ε the integrand is below e^{−60} of its peak.
    from scipy.integrate import quad

    reach = 60 / eps
    for a in ORDERS[:4]:
        def integrand(x, a=a):
            return eps / 2 * math.exp(-eps * (a * abs(x) + (1 - a) * abs(x - 1)))

        total = sum(quad(integrand, lo, hi, epsabs=0, epsrel=1e-12, limit=200)[0]
                    for lo, hi in ((-reach, 0), (0, 1), (1, 1 + reach)))
        assert laplace_renyi(eps, np.array([a]))[0] == pytest.approx(math.log(total) / (a - 1), rel=QUAD)


@pytest.mark.parametrize("eps", [0.1, 0.5, 2.0, 5.0])
def test_pure_to_rdp_is_steinkes_bound_and_rr_attains_it(eps):
    keep = 1 / (1 + math.exp(-eps))
    for a in ORDERS:
        direct = eps - math.log((1 + math.exp(-eps)) / (1 + math.exp(-(2 * a - 1) * eps))) / (a - 1)
        assert pure_to_rdp(epsilon=eps, alpha=a) == pytest.approx(direct, rel=REL)
        assert bernoulli_renyi(keep, 1 - keep, np.array([a]))[0] == pytest.approx(direct, rel=REL)


@pytest.mark.parametrize("eps", [0.1, 0.5, 2.0, 5.0])
def test_rho_is_epsilon_tanh_half_epsilon_at_most_half_epsilon_squared(eps):
    rho = pure_to_zcdp(epsilon=eps)
    assert rho == pytest.approx(eps * (math.exp(eps) - 1) / (math.exp(eps) + 1), rel=REL)
    assert rho <= eps**2 / 2
    # ρα bounds RR's D_α (zCDP), and the RDP bound is the tighter one.
    assert all(pure_to_rdp(epsilon=eps, alpha=a) <= rho * a * (1 + REL) for a in ORDERS)


def test_moving_two_bernoullis_closer_lowers_every_renyi_divergence():
    # The certified curve's argument: q ≤ q' ≤ p' ≤ p gives D_α(p' ‖ q') ≤ D_α(p ‖ q) for every α.
    grid = np.linspace(0.05, 0.95, 10)
    for q, q2, p2, p in itertools.combinations(grid, 4):
        assert np.all(bernoulli_renyi(p2, q2, ALPHAS) <= bernoulli_renyi(p, q, ALPHAS) * (1 + REL))
