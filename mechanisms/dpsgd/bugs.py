"""Known-buggy DP-SGD variants: what each proof gets wrong, its true effect, and a command that flags it.

Each function returns the `DPSGDConfig` of dpaudit's trainer with one bug,
the other settings as given. The commands train logistic regression on the
digits with full batches (q = 1), 10 steps and σ = 10, a claim of ε = 1.199
at δ = 1e-5; the Dirac canary's raw gradient has norm 10·C, so any step that
fails to clip it shows. Each runs in under a minute on 2 CPU cores.
"""

from __future__ import annotations

from typing import Any

from dpaudit.mechanisms.dpsgd.config import DPSGDConfig

__all__ = ["BUGGY_CONFIGS", "accountant_rate", "bias_unclipped", "clip_batch_mean", "no_clipping", "noise_unscaled", "shuffle_as_poisson"]


def no_clipping(**settings: Any) -> DPSGDConfig:
    """Per-example gradients are not clipped.

    The proof bounds each example's contribution by C; without clipping it
    is unbounded, so no finite ε holds (a canary with gradient 10·C moves
    the sum ten times as far). Flagged by
    `dpaudit dpsgd --bug no-clipping --sample-rate 1 --steps 10 --noise-multiplier 10 --runs 200`.
    """
    return DPSGDConfig(**settings, bug="no-clipping")


def noise_unscaled(**settings: Any) -> DPSGDConfig:
    """Noise of standard deviation σ instead of σ·C.

    Correct only at C = 1; at C = 10 the effective noise multiplier is
    σ/10 and ε grows from 1.2 to 17.9. Flagged by
    `dpaudit dpsgd --bug noise-unscaled --clip-norm 10 --sample-rate 1 --steps 10 --noise-multiplier 10 --runs 200`.
    """
    return DPSGDConfig(**settings, bug="noise-unscaled")


def accountant_rate(**settings: Any) -> DPSGDConfig:
    """The accountant is told a sampling rate 10× smaller than the sampler uses.

    E.g. q computed from the whole corpus while training on a 10% split:
    amplification by sampling is claimed for a rate never used. At q = 1,
    σ = 2, 10 steps the claim is ε = 0.798 where the code gives 7.511.
    Flagged by
    `dpaudit dpsgd --bug accountant-rate --sample-rate 1 --steps 10 --noise-multiplier 2 --runs 400`.
    """
    return DPSGDConfig(**settings, bug="accountant-rate")


def clip_batch_mean(**settings: Any) -> DPSGDConfig:
    """The batch-mean gradient is clipped to C instead of each example's gradient.

    The noise σ·C/(q·n) on the mean is calibrated for a per-example
    sensitivity C/(q·n), but one example can move the clipped mean by up to
    2C: the effective noise multiplier is σ/(2qn), q·n times too small.
    Flagged by
    `dpaudit dpsgd --bug clip-batch-mean --sample-rate 1 --steps 10 --noise-multiplier 10 --runs 200`.
    """
    return DPSGDConfig(**settings, bug="clip-batch-mean")


def bias_unclipped(**settings: Any) -> DPSGDConfig:
    """Bias parameters are left out of clipping (e.g. a parameter group the clipping code never sees).

    Only the other parameters' norm is bounded by C; a bias gradient is
    unbounded, so no finite ε holds. A Dirac canary on a bias coordinate
    shows it. Flagged by
    `dpaudit dpsgd --bug bias-unclipped --dirac-target bias --sample-rate 1 --steps 10 --noise-multiplier 10 --runs 500`.
    """
    return DPSGDConfig(**settings, bug="bias-unclipped")


def shuffle_as_poisson(**settings: Any) -> DPSGDConfig:
    """Shuffled fixed-size batches, accounted as Poisson sampling at q = batch/n.

    Shuffling does not give Poisson's amplification in general: Chua, Ghazi,
    Kamath, Kumar, Manurangsi, Sinha and Zhang ("How Private are DP-SGD
    Implementations?", ICML 2024) prove that shuffled batches can be much
    less private than Poisson sampling at the same rate, most at small σ and
    few epochs. dpaudit's upper bound for shuffling is the honest
    unamplified per-epoch composition; no accountant here computes the true
    ε of shuffling, which lies below it. The audits here cannot see the gap:
    at q = 0.1 for one epoch (10 steps), 1000 training runs certify 1.488 at
    σ = 0.5 and 0.345 at σ = 0.8, against Poisson claims of 12.26 and 4.54
    (`dpaudit dpsgd --bug shuffle-as-poisson --sample-rate 0.1 --steps 10
    --noise-multiplier 0.5 --runs 1000`); refuting it would take an attack
    built for one step's signal at ε above 10 and far more runs. Not
    flagged, and reported as a claim no audit here has refuted.
    """
    return DPSGDConfig(**settings, bug="shuffle-as-poisson")


BUGGY_CONFIGS = {
    "no-clipping": no_clipping,
    "noise-unscaled": noise_unscaled,
    "accountant-rate": accountant_rate,
    "clip-batch-mean": clip_batch_mean,
    "bias-unclipped": bias_unclipped,
    "shuffle-as-poisson": shuffle_as_poisson,
}
