"""One-way marginals of a dataset in {±1}^{n×d}: Laplace, Gaussian and ℓ∞-ball noise.

Steinke & Ullman, "Between Pure and Approximate Differential Privacy",
JPC 2016 (arXiv 1501.06095). The release is the vector of column means;
replacing one row moves each coordinate by at most 2/n, so the ℓ1, ℓ2 and
ℓ∞ sensitivities are 2d/n, 2√d/n and 2/n. Default pair: n rows of +1
against the same with the first row flipped to −1 (every coordinate moves).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np
from dpaudit.mechanisms.base import Claim, Mechanism, Relation
from dpaudit.mechanisms.builtins.gaussian import analytic_sigma
from dpaudit.mechanisms.neighbours import NeighbourCheck, declare, in_domain, of_length
from dpaudit.mechanisms.records import NumberRecords
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = [
    "check_marginals",
    "gaussian_marginals_event",
    "laplace_marginals_event",
    "linf_ball_noise",
    "marginal_release",
    "marginals_gaussian",
    "marginals_laplace",
    "marginals_linf",
]


def _sign_rows(d: int) -> NeighbourCheck:
    """Return a check: d0, d1 are n×d matrices of ±1 differing in at most one row (domain: vectors of d integers in [−1, 1])."""
    domain = NumberRecords(-1, 1, width=d, integer=True)

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        outside = in_domain(domain, d0, d1)
        if outside:
            return outside + " (each ±1)"
        for name, data in (("d0", d0), ("d1", d1)):
            zero = np.flatnonzero(np.any(data == 0, axis=1))
            if zero.size:
                return f"record {zero[0]} of {name} holds a 0; records are vectors of {d} entries, each ±1"
        changed = int(np.any(d0 != d1, axis=1).sum())
        return None if changed <= 1 else f"they differ in {changed} rows, more than 1"

    return declare(check, domain)


def linf_ball_noise(scale: float, d: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Return `size` draws with density ∝ exp(−‖y‖∞/scale) on R^d: R ~ Gamma(d + 1, scale), y ~ U[−R, R]^d.

    Steinke & Ullman, arXiv 1501.06095, §3 (the ε-DP upper bound with scale Δ∞/ε).
    """
    radius = rng.gamma(d + 1, scale, (size, 1))
    return radius * rng.uniform(-1.0, 1.0, (size, d))


def _marginal_pair(n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Return n rows of +1 and the same with the first row all −1 (int8: one byte per entry)."""
    d0 = np.ones((n, d), dtype=np.int8)
    d1 = d0.copy()
    d1[0] = -1.0
    return d0, d1


def check_marginals(owner: str, epsilon: float, num_rows: int, dim: int) -> tuple[float, int, int]:
    """Return (ε > 0, n ≥ 1, d ≥ 1) validated for the factory `owner`."""
    eps = check_real(epsilon, "epsilon", owner, low=0.0, low_open=True)
    return eps, check_int(num_rows, "num_rows", owner), check_int(dim, "dim", owner)


def laplace_marginals_event(scale: float, n: int, d: int) -> dp_event.DpEvent:
    """Return the event of Laplace(scale) noise on each of d means of n rows (replace-one).

    Per coordinate the change is 2/n = 2C in dp_accounting's replace-one
    convention, so the noise multiplier is scale/C = scale·n; d of them compose.
    """
    from dp_accounting import dp_event

    return dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(noise_multiplier=scale / (1 / n)), d)


def gaussian_marginals_event(sigma: float, n: int, d: int) -> dp_event.DpEvent:
    """Return the event of N(0, σ²) noise on each of d means of n rows: ℓ2 change 2√d/n = 2C (replace-one)."""
    from dp_accounting import dp_event

    return dp_event.GaussianDpEvent(noise_multiplier=sigma / (math.sqrt(d) / n))


def marginal_release(name: str, eps: float, dlt: float, n: int, d: int,
                     noise: Callable[[int, np.random.Generator], np.ndarray], event: dp_event.DpEvent, params: dict,
                     text: str) -> Mechanism:
    """Return the mechanism releasing the column means of its data plus `noise(size, rng)` (size × d).

    The claim is (eps, dlt)-DP under replace-one on n × d matrices of ±1;
    `event` is what the noise really gives (the theory upper bound's input).
    Means are summed in float64 without copying the data (int8 rows stay int8).
    """
    def sample(data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(data).mean(axis=0, dtype=float) + noise(size, rng)

    return Mechanism(
        name=name,
        sampler=sample,
        claim=Claim(eps, dlt, Relation.REPLACE_ONE),
        event=event,
        default_pair=_marginal_pair(n, d),
        neighbours=of_length(n, _sign_rows(d)),
        params={"epsilon": eps, "num_rows": n, "dim": d, **params},
        description=text,
    )


@register("marginals_laplace", expected="consistent")
def marginals_laplace(*, epsilon: float = 1.0, num_rows: int = 10, dim: int = 5) -> Mechanism:
    """Return column means + Laplace(2d/(nε)) per coordinate: ε-DP (ℓ1 sensitivity 2d/n)."""
    eps, n, d = check_marginals("marginals_laplace", epsilon, num_rows, dim)
    scale = 2 * d / (n * eps)
    event = laplace_marginals_event(scale, n, d)
    return marginal_release("marginals_laplace", eps, 0.0, n, d, lambda size, rng: rng.laplace(0.0, scale, (size, d)),
                      event, {}, "One-way marginals with Laplace noise.")


@register("marginals_gaussian", expected="consistent")
def marginals_gaussian(*, epsilon: float = 1.0, delta: float = 1e-5, num_rows: int = 10, dim: int = 5) -> Mechanism:
    """Return column means + N(0, σ²) per coordinate, σ the analytic calibration for ℓ2 sensitivity 2√d/n."""
    eps, n, d = check_marginals("marginals_gaussian", epsilon, num_rows, dim)
    dlt = check_real(delta, "delta", "marginals_gaussian", low=0.0, high=1.0, low_open=True, high_open=True)
    sigma = analytic_sigma(eps, dlt, 2 * math.sqrt(d) / n)
    event = gaussian_marginals_event(sigma, n, d)
    return marginal_release("marginals_gaussian", eps, dlt, n, d, lambda size, rng: rng.normal(0.0, sigma, (size, d)),
                      event, {"delta": dlt, "sigma": sigma}, "One-way marginals with Gaussian noise.")


@register("marginals_linf", expected="consistent")
def marginals_linf(*, epsilon: float = 1.0, num_rows: int = 10, dim: int = 5) -> Mechanism:
    """Return column means + noise with density ∝ exp(−ε‖y‖∞ n/2): ε-DP.

    The ℓ∞ sensitivity is 2/n (Steinke & Ullman, arXiv 1501.06095, §3).
    """
    from dpaudit.mechanisms.events import EpsilonDeltaDpEvent

    eps, n, d = check_marginals("marginals_linf", epsilon, num_rows, dim)
    scale = 2 / (n * eps)
    return marginal_release("marginals_linf", eps, 0.0, n, d, lambda size, rng: linf_ball_noise(scale, d, size, rng),
                      EpsilonDeltaDpEvent(eps, 0.0), {}, "One-way marginals with ℓ∞-ball noise.")
