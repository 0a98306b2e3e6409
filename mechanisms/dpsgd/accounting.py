"""The privacy events of a DP-SGD run: what its proof claims and what the code actually does.

Poisson sampling at rate q for T steps with noise multiplier σ is
`SelfComposed(PoissonSampled(q, Gaussian(σ)), T)` (Abadi et al. 2016;
tight accounting by dp_accounting's PLD, Koskela et al. 2020, RDP of
Mironov, Talwar and Zhang 2019 beside it). Shuffled fixed-size batches use
each example once an epoch; dpaudit accounts them honestly without any
amplification, as one Gaussian(σ) per epoch it is used in (deterministic
batches are the worst case of shuffling: Chua et al., "How Private are DP-SGD
Implementations?", ICML 2024), never as Poisson sampling.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING

from dpaudit.mechanisms.dpsgd.config import ACCOUNTANT_RATE_FACTOR, DPSGDConfig

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = ["actual_event", "batch_size", "claimed_event", "pld_epsilon", "poisson_event", "rdp_epsilon"]


def batch_size(config: DPSGDConfig, rows: int) -> int:
    """Return the fixed batch size of shuffled batching (at least 1), round(q·n)."""
    return max(1, round(config.sample_rate * rows))


def _epochs_used(config: DPSGDConfig, rows: int) -> int:
    """Return how many epochs T shuffled steps touch, i.e. how often one example can be used."""
    return math.ceil(config.steps * batch_size(config, rows) / rows)


def poisson_event(noise_multiplier: float, sample_rate: float, steps: int) -> dp_event.DpEvent:
    """Return T compositions of the Poisson-subsampled Gaussian mechanism."""
    from dp_accounting import dp_event

    step = dp_event.GaussianDpEvent(noise_multiplier)
    if sample_rate < 1.0:
        step = dp_event.PoissonSampledDpEvent(sample_rate, step)
    return dp_event.SelfComposedDpEvent(step, steps)


def _shuffled_event(config: DPSGDConfig, rows: int) -> dp_event.DpEvent:
    """Return the honest event of shuffled batches: Gaussian(σ) once per epoch an example is used in."""
    from dp_accounting import dp_event

    return dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(config.noise_multiplier), _epochs_used(config, rows))


def claimed_event(config: DPSGDConfig, rows: int) -> dp_event.DpEvent:
    """Return the event the run's privacy proof accounts (for a buggy run, the wrong one its code assumes)."""
    if config.shuffled and config.bug != "shuffle-as-poisson":
        return _shuffled_event(config, rows)
    rate = config.sample_rate / ACCOUNTANT_RATE_FACTOR if config.bug == "accountant-rate" else config.sample_rate
    return poisson_event(config.noise_multiplier, rate, config.steps)


def actual_event(config: DPSGDConfig, rows: int) -> dp_event.DpEvent:
    """Return what the code does, as an event (NonPrivate when a gradient escapes clipping).

    "noise-unscaled" adds noise σ where σ·C was due: noise multiplier σ/C.
    "clip-batch-mean" clips the batch mean to C and scales it back by the
    expected batch size q·n, so one example moves the sum by up to 2·q·n·C:
    noise multiplier σ/(2qn), still amplified by sampling (an unsampled
    example changes nothing).
    """
    from dp_accounting import dp_event

    if config.bug in ("no-clipping", "bias-unclipped"):
        return dp_event.NonPrivateDpEvent()
    if config.shuffled:
        return _shuffled_event(config, rows)
    sigma = config.noise_multiplier
    if config.bug == "noise-unscaled":
        sigma = sigma / config.clip_norm
    elif config.bug == "clip-batch-mean":
        sigma = sigma / (2.0 * config.sample_rate * rows)
    return poisson_event(sigma, config.sample_rate, config.steps)


def pld_epsilon(event: dp_event.DpEvent, delta: float) -> float:
    """Return ε at δ from dp_accounting's PLD accountant (add-remove)."""
    from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

    return float(PLDAccountant().compose(event).get_epsilon(delta))


def rdp_epsilon(event: dp_event.DpEvent, delta: float) -> float:
    """Return ε at δ from dp_accounting's RDP accountant (add-remove; looser than PLD).

    The accountant logs a warning for each order whose series it drops; those
    orders are excluded from its minimum, which stays a valid bound, so the
    warnings are silenced.
    """
    from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant

    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)
    try:
        return float(RdpAccountant().compose(event).get_epsilon(delta))
    finally:
        absl.setLevel(level)
