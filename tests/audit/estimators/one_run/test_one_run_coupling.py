"""Coupling tail bound for one-run auditing with δ: formula, inversion, soundness where δ matters."""

import itertools

import numpy as np
import pytest
from dpaudit.audit.estimators.one_run.binomial import one_run_epsilon
from dpaudit.audit.estimators.one_run.coupling import (
    PRICES,
    _adversary_bounds,
    _slack_bounds,
    coupling_epsilon,
    coupling_p_value,
)
from scipy.optimize import linprog
from scipy.special import expit
from scipy.stats import binom


def _all_slacks_p_value(m, r, v, eps, delta, sides):
    """The bound minimised over every slack b = 0, ..., v − 1, term by term."""
    p = expit(eps)
    spill = sides * m * (1 - p) * delta / 2
    return min(1.0, min(binom.sf(v - b - 1, r, p) + spill / (b + 1) for b in range(v)))


@pytest.mark.parametrize("m, r, v", [(100, 10, 7), (20_000, 78, 78), (2000, 300, 260), (50, 5, 1)])
@pytest.mark.parametrize("eps", [0.0, 1.0, 3.0])
@pytest.mark.parametrize("sides", [1, 2])
def test_p_value_is_at_most_the_minimum_over_slacks(m, r, v, eps, sides):
    """The slack part equals the minimum over every slack when v ≤ 64 (never below it above); the p-value is at most it."""
    kw = dict(canaries=m, guesses=r, correct=v, delta=1e-3, sides=sides)
    slack = min(1.0, float(_slack_bounds(epsilon=np.array([eps]), **kw)[0]))
    exact = _all_slacks_p_value(m, r, v, eps, 1e-3, sides)
    assert slack >= exact - 1e-12
    if v <= 64:
        assert slack == pytest.approx(exact, rel=1e-9, abs=1e-15)
    assert coupling_p_value(epsilon=eps, **kw) <= slack


def _best_adversary(r: int, v: int, p: float, spill: float) -> float:
    """The largest P[W ≥ v] over all strategies of the coupled game with expected price ≤ spill, by linear programming.

    Variables per history h (a tuple of outcomes): y_h = P(reach h), z_h =
    P(reach h and guess right there), c_h ≥ z_h − p·y_h, c_h ≥ 0 (the price);
    children: y_{h+(1,)} = z_h, y_{h+(0,)} = y_h − z_h.
    """
    histories = [h for n in range(r + 1) for h in itertools.product((0, 1), repeat=n)]
    index = {h: i for i, h in enumerate(histories)}
    inner = [h for h in histories if len(h) < r]
    size = len(histories) + 2 * len(inner)
    z = {h: len(histories) + i for i, h in enumerate(inner)}
    c = {h: len(histories) + len(inner) + i for i, h in enumerate(inner)}
    equalities, rhs = [np.eye(1, size, index[()])[0]], [1.0]
    for h in inner:
        right, wrong = np.zeros(size), np.zeros(size)
        right[[index[h + (1,)], z[h]]] = 1.0, -1.0
        wrong[[index[h + (0,)], index[h], z[h]]] = 1.0, -1.0, 1.0
        equalities += [right, wrong]
        rhs += [0.0, 0.0]
    bounds_rows, bounds_rhs = [], []
    for h in inner:
        price = np.zeros(size)
        price[[z[h], index[h], c[h]]] = 1.0, -p, -1.0
        cap = np.zeros(size)
        cap[[z[h], index[h]]] = 1.0, -1.0
        bounds_rows += [price, cap]
        bounds_rhs += [0.0, 0.0]
    budget = np.zeros(size)
    budget[list(c.values())] = 1.0
    objective = np.zeros(size)
    objective[[index[h] for h in histories if len(h) == r and sum(h) >= v]] = -1.0
    result = linprog(objective, A_ub=np.array(bounds_rows + [budget]), b_ub=bounds_rhs + [spill],
                     A_eq=np.array(equalities), b_eq=rhs, bounds=(0, None))
    return -result.fun


@pytest.mark.parametrize("r, v", [(1, 1), (3, 3), (4, 3), (5, 2), (5, 5)])
@pytest.mark.parametrize("eps", [0.0, 1.0])
@pytest.mark.parametrize("spill", [1e-4, 0.01, 0.2])
def test_the_adversary_bound_is_the_best_strategy_up_to_the_price_grid(r, v, eps, spill):
    """Never below the linear programme's optimum (sound), above it at most by the ratio of consecutive prices.

    The dual V_λ + λΔ is convex in λ with V falling, so the grid point just
    above the best λ costs at most a factor PRICES[1]/PRICES[0].
    """
    p = expit(eps)
    canaries = 2 * spill / ((1 - p) * 1e-3)
    bound = float(_adversary_bounds(canaries=canaries, guesses=r, correct=v, epsilon=np.array([eps]), delta=1e-3,
                                    sides=1)[0])
    best = _best_adversary(r, v, p, spill)
    assert best - 1e-9 <= bound <= best * PRICES[1] / PRICES[0] + 1e-12


@pytest.mark.parametrize("eps", [0.0, 0.5, 2.0])
@pytest.mark.parametrize("delta", [0.0, 0.01, 0.3])
def test_one_canary_is_the_best_accuracy_of_an_eps_delta_guess(eps, delta):
    """m = r = 1, right: the bound is (e^ε + δ)/(1 + e^ε), what randomized response with a δ reveal reaches."""
    got = coupling_p_value(canaries=1, guesses=1, correct=1, epsilon=eps, delta=delta)
    assert got == pytest.approx((np.exp(eps) + delta) / (1 + np.exp(eps)), rel=1e-12)


def test_without_delta_it_is_the_binomial_tail_and_agrees_with_steinke():
    for r, v in [(100, 80), (1000, 700), (40, 40)]:
        kw = dict(canaries=2 * r, guesses=r, correct=v, delta=0.0, beta=0.05)
        assert coupling_epsilon(**kw) == pytest.approx(one_run_epsilon(**kw), abs=1e-6)


@pytest.mark.parametrize("m, r, v, beta", [(20_000, 78, 78, 0.01), (20_000, 2000, 1900, 0.001),
                                           (2000, 200, 150, 0.05), (200, 20, 20, 0.01)])
def test_epsilon_is_rejected_and_beats_steinke_where_m_delta_is_large(m, r, v, beta):
    kw = dict(canaries=m, guesses=r, correct=v, delta=1e-5)
    eps = coupling_epsilon(beta=beta, **kw)
    assert eps > 0.0
    assert coupling_p_value(epsilon=eps, **kw) < beta
    assert coupling_p_value(epsilon=eps + 1e-3, **kw) >= beta
    if m * 1e-5 / beta > 1.0:
        assert eps > one_run_epsilon(beta=beta, **kw) + 0.5


def test_no_correct_guess_rejects_nothing():
    assert coupling_epsilon(canaries=100, guesses=10, correct=0, delta=1e-5, beta=0.05) == 0.0
    assert coupling_p_value(canaries=100, guesses=10, correct=0, epsilon=1.0, delta=1e-5) == 1.0


@pytest.mark.parametrize("eps", [0.0, 1.0])
@pytest.mark.parametrize("sides", [1, 2])
def test_sound_on_a_mechanism_that_spends_its_delta(eps, sides):
    """Each canary revealed w.p. δ, else randomized response at ε: exactly (ε, δ)-DP per canary.

    The attack guesses the revealed canaries first (their bits are known),
    then the randomized responses: W = min(k, R) + Binomial(k − min(k, R), p)
    with R revealed canaries among the m available. δ = 10⁻³ and m = 10⁴
    reveal about 5 (IN-only guessing) or 10 canaries, as many as the k = 10
    guesses: the bound must pay for them. Over 2000 runs it may exceed ε in
    at most a binomial 10⁻⁴ quantile of β = 5% of them.
    """
    runs, m, k, delta, beta = 2000, 10_000, 10, 1e-3, 0.05
    rng = np.random.default_rng(7 + sides)
    revealed = np.minimum(k, rng.binomial(m, delta * sides / 2, size=runs))
    correct = revealed + rng.binomial(k - revealed, expit(eps))
    exceed = sum(coupling_epsilon(canaries=m, guesses=k, correct=int(v), delta=delta, beta=beta,
                                  sides=sides) > eps for v in correct)
    assert exceed <= binom.isf(1e-4, runs, beta)
