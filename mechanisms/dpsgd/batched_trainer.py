"""DP-SGD runs trained side by side: R runs' parameters as one (R, P) tensor, each run trained as `DPSGDTrainer.train` trains it.

What stays per run: its generator, from which it draws what the per-run
trainer draws, in the same order (each step's batch, then that step's
noise); its insertions (canaries in or out); its batches (Poisson, or its
own shuffles). What is shared: the arithmetic of a step. The per-example
gradients of every run's batch come from one `LinearStack` call, clipped
through their norms, and summed by one matrix product per layer; inserted
gradients (Dirac canaries) go through the per-run trainer's own
`_example_terms`, and each sum through its `_batch_term`.

So run r's iterates depend only on θ₀, its insertions and its generator,
never on the runs beside it; they are the per-run trainer's up to float32
rounding (the sums are taken in another order), bit for bit on the
coordinates that no real example's gradient touches (a quiet Dirac
canary's). Every bug of `DPSGDConfig` is reproduced (`_scales` restates
`_example_terms` on norms; the tests compare both trainers on every bug):
the batched trainer is exact for all of them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np
from dpaudit.mechanisms.dpsgd.config import DPSGDConfig
from dpaudit.mechanisms.dpsgd.data import TrainingData
from dpaudit.mechanisms.dpsgd.linear_stack import LinearStack
from dpaudit.mechanisms.dpsgd.trainer import DPSGDTrainer, Insertions, clip_factors

__all__ = ["GROUP_MEMORY", "MAX_GROUP", "BatchedDPSGDTrainer"]

GROUP_MEMORY = 256 * 2**20  # bytes a group of runs may hold: kept iterates and one step's activations
MAX_GROUP = 512


@dataclasses.dataclass(frozen=True)
class _Pool:
    """Every run's training examples: the data's rows, then each run's inserted rows; each run's inserted gradients.

    `x` (N, F + 1) the rows with a last feature of ones, `squares` (N,) the
    rows' squared norms (without it), `y` (N,); `terms`
    (G, P) the inserted gradients' example terms. Run r's inserted rows are
    rows `row_starts[r]` … of x, its gradients rows `gradient_starts[r]` …
    of `terms`; `sizes[r]` its pool as the per-run trainer counts it (data
    rows, inserted rows, inserted gradients); `whole` where the examples of
    whole pools are (every run's batch under full batches).
    """

    x: Any
    squares: Any
    y: Any
    terms: Any
    rows: np.ndarray
    row_starts: np.ndarray
    gradient_starts: np.ndarray
    sizes: np.ndarray
    whole: _Located | None = None


@dataclasses.dataclass(frozen=True)
class _Located:
    """Where one step's sampled examples are: rows of the pool's x (run r's are the next `counts[r]`), and inserted gradients.

    `shared`: every run sampled exactly the data's rows. `owners[j]` is the
    run of the sampled gradient `terms[gradients[j]]`.
    """

    rows: np.ndarray
    counts: np.ndarray
    shared: bool
    owners: np.ndarray
    gradients: np.ndarray


class BatchedDPSGDTrainer(DPSGDTrainer):
    """A `DPSGDTrainer` that also trains many runs at once (`train_runs`), each exactly as `train` would."""

    def __init__(self, config: DPSGDConfig, data: TrainingData, *, device: Any = None) -> None:
        super().__init__(config, data, device=device)
        self.stack = LinearStack(self.model)

    def train_runs(self, theta0: np.ndarray, insertions: Sequence[Insertions], rngs: Sequence[np.random.Generator], *,
                   keep_iterates: bool = False) -> np.ndarray:
        """Return R = len(rngs) runs' iterates, (R, T + 1, P), or (R, 1, P) holding θ_T unless `keep_iterates`.

        Run r is `train(theta0, insertions[r], rngs[r], keep_iterates=...)`:
        it draws the same numbers from `rngs[r]`, so it has the same law
        whichever runs it is trained with (and the same iterates up to
        float32 rounding).
        """
        pool = self._pool(insertions)
        batches = [self._batches(int(size), rng) for size, rng in zip(pool.sizes, rngs)]
        theta = self.model.tensor(theta0).repeat(len(rngs), 1)
        steps = self.config.steps
        out = np.empty((len(rngs), steps + 1 if keep_iterates else 1, self.model.size), np.result_type(theta0, np.float32))
        if keep_iterates:
            out[:, 0] = theta0
        for step in range(1, steps + 1):
            chosen = [next(batch) for batch in batches]
            noise = np.stack([rng.normal(0.0, self._noise_std(), self.model.size) for rng in rngs])
            noisy = self._batch_term(self._example_sums(theta, pool, chosen)) + self.model.tensor(noise)
            theta = theta - self.config.learning_rate / self.expected_batch * noisy
            if keep_iterates:
                out[:, step] = theta.cpu().numpy()
        if not keep_iterates:
            out[:, 0] = theta.cpu().numpy()
        return out

    def group_size(self, *, keep_iterates: bool) -> int:
        """Return how many runs to train at once: as many as GROUP_MEMORY holds, at most MAX_GROUP.

        A run holds its float32 iterates and one step's activations: about (F + 3·Σ layer widths) numbers per example of a
        batch, counted at q·n plus four standard deviations.
        """
        n, q = self.data.rows, self.config.sample_rate
        batch = min(n, q * n + 4 * np.sqrt(n * q * (1 - q)) + 1)
        widths = sum(rows + cols for rows, cols in self.stack.shapes)
        kept = (self.config.steps + 1 if keep_iterates else 1) * self.model.size
        per_run = 4 * (kept + batch * (self.data.features + 3 * widths) + 6 * self.model.size)
        return int(max(1, min(MAX_GROUP, GROUP_MEMORY // per_run)))

    def _pool(self, insertions: Sequence[Insertions]) -> _Pool:
        """Return the examples of every run: the data, every run's inserted rows and inserted gradients (as example terms)."""
        rows = np.array([insert.rows for insert in insertions], dtype=np.int64)
        gradients = np.array([insert.gradient_count for insert in insertions], dtype=np.int64)
        xs = [self.data.x] + [np.asarray(i.x, dtype=np.float32) for i in insertions if i.rows]
        ys = [self.data.y] + [np.asarray(i.y, dtype=np.int64) for i in insertions if i.rows]
        grads = [np.asarray(i.gradients, dtype=np.float32) for i in insertions if i.gradient_count]
        x = self.model.tensor(np.concatenate(xs))
        terms = self._example_terms(self.model.tensor(np.concatenate(grads))) if grads else None
        ones = self.torch.ones((len(x), 1), device=self.model.device)
        pool = _Pool(x=self.torch.cat([x, ones], dim=1), squares=(x * x).sum(dim=1),
                     y=self.torch.as_tensor(np.concatenate(ys), device=self.model.device), terms=terms,
                     rows=rows, row_starts=self.data.rows + np.cumsum(rows) - rows,
                     gradient_starts=np.cumsum(gradients) - gradients, sizes=self.data.rows + rows + gradients)
        return dataclasses.replace(pool, whole=self._locate(pool, [np.arange(size) for size in pool.sizes]))

    def _example_sums(self, theta: Any, pool: _Pool, chosen: list[np.ndarray]) -> Any:
        """Return each run's sum of example terms (R, P) over its batch `chosen[r]` (indices into its own pool)."""
        whole = all(len(batch) == size for batch, size in zip(chosen, pool.sizes))
        located = pool.whole if whole else self._locate(pool, chosen)
        sums = self._data_sums(theta, pool, located)
        if not len(located.gradients):
            return sums
        device = self.model.device
        terms = pool.terms[self.torch.as_tensor(located.gradients, device=device)]
        return sums.index_add(0, self.torch.as_tensor(located.owners, device=device), terms)

    def _locate(self, pool: _Pool, chosen: list[np.ndarray]) -> _Located:
        """Return where the examples of each run's batch `chosen[r]` (indices into its own pool) are."""
        n = self.data.rows
        owners, local = np.repeat(np.arange(len(chosen)), [len(batch) for batch in chosen]), np.concatenate(chosen)
        in_rows = local < n + pool.rows[owners]
        rows = np.where(local < n, local, local - n + pool.row_starts[owners])[in_rows]
        counts = np.bincount(owners[in_rows], minlength=len(chosen))
        extra = ~in_rows
        gradients = local[extra] - n - pool.rows[owners[extra]] + pool.gradient_starts[owners[extra]]
        return _Located(rows, counts, bool((counts == n).all() and rows.max(initial=-1) < n), owners[extra], gradients)

    def _data_sums(self, theta: Any, pool: _Pool, located: _Located) -> Any:
        """Return each run's sum of example terms (R, P) over its sampled rows.

        When every run has sampled all the data (full batches), the runs share one input matrix.
        """
        n = self.data.rows
        if located.shared:
            mask = self.torch.ones((len(located.counts), n), device=self.model.device)
            return self.stack.example_sums(theta, pool.x[:n].T, pool.squares[:n], pool.y[:n],
                                           lambda weights, biases: self._scales(weights, biases, mask))
        index, mask = self._padded(located.rows, located.counts)
        x = pool.x.index_select(0, index.flatten()).view(*index.shape, -1)
        return self.stack.example_sums(theta, x.transpose(1, 2), pool.squares[index], pool.y[index],
                                       lambda weights, biases: self._scales(weights, biases, mask))

    def _padded(self, rows: np.ndarray, counts: np.ndarray) -> tuple[Any, Any]:
        """Return the runs' rows as an (R, L) index, padded with row 0, and the (R, L) mask of real entries (1.0, else 0.0)."""
        width = max(1, int(counts.max(initial=0)))
        real = np.arange(width) < counts[:, None]
        index = np.zeros((len(counts), width), dtype=np.int64)
        index[real] = rows
        return self.torch.as_tensor(index, device=self.model.device), self.model.tensor(real)

    def _scales(self, weight_squares: Any, bias_squares: Any, mask: Any) -> tuple[Any, Any]:
        """Return the factors (R, B) turning each example's gradient into its term, for its weights and its biases.

        `_example_terms` stated on squared norms: clipped by min(1, C/‖g‖)
        (correct), not at all ("no-clipping", "clip-batch-mean"), or its
        weights clipped by their own norm and its biases left as they are
        ("bias-unclipped"). Unsampled (masked) examples get 0.
        """
        torch, c, bug = self.torch, self.config.clip_norm, self.config.bug
        if bug in ("no-clipping", "clip-batch-mean"):
            return mask, mask
        if bug == "bias-unclipped":
            return clip_factors(torch, torch.sqrt(weight_squares), c) * mask, mask
        scales = clip_factors(torch, torch.sqrt(weight_squares + bias_squares), c) * mask
        return scales, scales
