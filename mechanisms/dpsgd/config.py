"""What a DP-SGD run is: model, data, noise, clipping, sampling, steps, and the bug it carries (if any).

Bugs, each a real mistake of deployed DP-SGD code (the docstrings of
`dpaudit.mechanisms.dpsgd.bugs` say what each proof step gets wrong and name the
command that flags it):

- "no-clipping": per-example gradients are not clipped;
- "noise-unscaled": noise σ instead of σ·C;
- "accountant-rate": the accountant is told a sampling rate 10× smaller
  than the sampler uses;
- "clip-batch-mean": the batch-mean gradient is clipped instead of each
  example's, with noise calibrated for per-example clipping;
- "bias-unclipped": bias parameters are left out of clipping;
- "shuffle-as-poisson": shuffled fixed-size batches accounted as Poisson
  sampling.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.dpsgd.data import DATASETS, DIGITS
from dpaudit.mechanisms.dpsgd.models import LOGREG, MODELS
from dpaudit.validation import check_delta, check_int, check_real

__all__ = ["ACCOUNTANT_RATE_FACTOR", "BATCHINGS", "BUGS", "DPSGDConfig"]

POISSON, SHUFFLE = "poisson", "shuffle"
BATCHINGS = (POISSON, SHUFFLE)
BUGS = ("no-clipping", "noise-unscaled", "accountant-rate", "clip-batch-mean", "bias-unclipped", "shuffle-as-poisson")
ACCOUNTANT_RATE_FACTOR = 10.0


@dataclasses.dataclass(frozen=True)
class DPSGDConfig:
    """One DP-SGD training run's settings.

    The update is θ ← θ − lr · (Σ clipped gradients + N(0, σ²C²I)) / (q·n),
    the sum normalised by the expected batch size as Opacus does.
    """

    model: str = LOGREG
    data: str = DIGITS
    noise_multiplier: float = 1.0
    clip_norm: float = 1.0
    sample_rate: float = 256 / 1797
    steps: int = 100
    learning_rate: float = 2.0
    batching: str = POISSON
    delta: float = 1e-5
    bug: str | None = None

    def __post_init__(self) -> None:
        owner = "DPSGDConfig"
        _choice(self.model, MODELS, "model")
        _choice(self.data, DATASETS, "data")
        _choice(self.batching, BATCHINGS, "batching")
        if self.bug is not None:
            _choice(self.bug, BUGS, "bug")
        for name in ("noise_multiplier", "clip_norm", "learning_rate"):
            check_real(getattr(self, name), name, owner, low=0.0, low_open=True)
        check_real(self.sample_rate, "sample_rate", owner, low=0.0, high=1.0, low_open=True)
        check_int(self.steps, "steps", owner)
        check_delta(self.delta, "delta", owner)

    @property
    def shuffled(self) -> bool:
        """True when batches are shuffled fixed-size ones (the "shuffle-as-poisson" bug always shuffles)."""
        return self.batching == SHUFFLE or self.bug == "shuffle-as-poisson"

    def to_dict(self) -> dict[str, Any]:
        """Return the settings as a JSON-ready dict."""
        return dataclasses.asdict(self)


def _choice(value: str, choices: tuple[str, ...], name: str) -> None:
    if value not in choices:
        raise InvalidParameterError(f"DPSGDConfig: {name} must be one of {', '.join(choices)}; got {value!r} instead.")

