"""A small DP synthetic-data generator written for the tests, with its three planted bugs (helpers, not tests).

The correct generator measures every one-way marginal of a table of
category codes with Gaussian noise, σ calibrated (analytically, Balle &
Wang 2018) to (ε, δ) for the ℓ2 sensitivity √d of d marginals under
add-remove, over the declared domain's categories, and samples each column
of `sample_rows` rows independently from its clipped, normalised noisy
marginal. Planted bugs (the classes of Annamalai et al. 2024 and Cebere et
al. 2026):

- "noise-by-length": σ divided by the dataset's length (a normaliser read
  from the data: calibrated for frequencies, released for counts);
- "data-domain": the categories are those present in the data (`np.unique`);
- "measured-twice": every marginal measured twice and averaged, charged once.

`release="measurements"` (white-box) returns the noisy marginals
themselves, concatenated, instead of a table.
"""

from __future__ import annotations

import numpy as np
from dpaudit.mechanisms import blackbox
from dpaudit.mechanisms.builtins.gaussian import analytic_sigma
from dpaudit.mechanisms.worst_case_tables import TableDomain, worst_case_pair

BUGS = (None, "noise-by-length", "data-domain", "measured-twice")


def _noisy_marginal(column: np.ndarray, categories: np.ndarray, sigma: float, bug: str | None,
                    rng: np.random.Generator) -> np.ndarray:
    counts = np.array([np.sum(column == c) for c in categories], dtype=float)
    noisy = counts + rng.normal(0.0, sigma, counts.size)
    if bug == "measured-twice":
        noisy = (noisy + counts + rng.normal(0.0, sigma, counts.size)) / 2
    return noisy


def _column(noisy: np.ndarray, categories: np.ndarray, rows: int, rng: np.random.Generator) -> np.ndarray:
    weights = np.clip(noisy, 0.0, None)
    p = weights / weights.sum() if weights.sum() > 0 else np.full(len(categories), 1.0 / len(categories))
    return rng.choice(categories, size=rows, p=p)


def marginal_generator(domain: TableDomain, *, epsilon: float, delta: float, bug: str | None = None,
                       sample_rows: int = 50, release: str = "table", rows: int = 10):
    """Return the generator as a black box (`fn(data, rng)` → a table, or the noisy marginals), on the worst-case pair."""
    assert bug in BUGS and release in ("table", "measurements")
    sigma0 = analytic_sigma(epsilon, delta, float(np.sqrt(domain.width)))

    def generate(data, rng):
        data = np.asarray(data)
        sigma = sigma0 / len(data) if bug == "noise-by-length" else sigma0
        marginals, table = [], []
        for j, k in enumerate(domain.categories):
            categories = np.unique(data[:, j]) if bug == "data-domain" else np.arange(k)
            noisy = _noisy_marginal(data[:, j], categories, sigma, bug, rng)
            marginals.append(np.bincount(categories, weights=noisy, minlength=k))
            table.append(_column(noisy, categories, sample_rows, rng))
        return np.concatenate(marginals) if release == "measurements" else np.column_stack(table)

    return blackbox(generate, epsilon=epsilon, delta=delta, name=f"marginals[{bug or 'correct'}]",
                    default_pair=worst_case_pair(domain, rows), neighbours=domain.neighbours())
