"""MST's white-box release in batches, INSIDE the smartnoise-synth environment: what it draws, scored, without the rest of the fit.

Loaded by `synth_side` (by path) for release "measurements" of MST on a
dataset where MST's domain compression keeps every category (see
`batch_applies`). A white-box audit reads what MST draws: its Gaussian
one-way marginals, its exponential-mechanism choice of a spanning tree of
two-way marginals, and those two-way marginals. The final estimation of
MST's graphical model and the sampled table come after the last draw and
are never needed. What a fit spends its time on before that is the
estimate its selection scores against (mbi's `mirror_descent`, 1,000
iterations, compiled afresh in every fit): `one_way_estimate` is the same
algorithm (the same loss, Lipschitz step, line search and iterations) in
numpy, for a whole batch of runs at once, and the test
`tests/mechanisms/test_mst_white_box_batch.py` checks it against mbi's.

Every draw is MST's own: the noise through MST's `gaussian_noise` (OpenDP),
the choice through its `exponential_mechanism`, at the σ and ε a real MST
fit on the same data measured with (`Calibration`, recorded from one fit
per batch). The estimate uses the true number of rows (`known_total`), as
MST's selection does.

The score of a run is the log-likelihood ratio, D1 (base and target)
against D0 (base), of its whole transcript: the measurements'
Σ ((y − x0)·t − ‖t‖²/2)/σ², and for each draw of the tree, the log of its
probability under D1 less that under D0, each hypothesis with its own
marginals and its own estimate (`known_total` its own row count) from the
run's noisy one-way marginals. It reads the draws and the pair (fixed
before the game), never which dataset was fitted.
"""

import itertools

import numpy as np

__all__ = ["Calibration", "batch_applies", "batch_scores", "one_way_estimate"]

COMPRESSION = 3.0  # MST keeps a category whose noisy one-way count is ≥ 3σ (`compress_domain`)
MARGIN = 8.0  # batches serve datasets whose smallest one-way count is ≥ (3 + 8)σ: a dropped category has odds < 1e-15
LIPSCHITZ_STEPS = 50  # mbi's `calculate_l2_lipschitz`: power iterations
ITERATIONS = 1000  # MST's `select`: mirror_descent(..., iters=1000)


class Calibration:
    """What one real MST fit measured with: σ of its one-way and two-way marginals, its selection's ε and sensitivity."""

    def __init__(self, one_way, two_way, epsilon, sensitivity, monotonic):
        self.one_way, self.two_way = float(one_way), float(two_way)
        self.epsilon, self.sensitivity, self.monotonic = float(epsilon), float(sensitivity), bool(monotonic)

    def scale(self):
        """Return c, MST's selection draws with probabilities ∝ exp(c · score)."""
        return (1.0 if self.monotonic else 0.5) * self.epsilon / self.sensitivity


def _counts(codes, cards):
    """Return the one-way counts (a list, one per column) of `codes` (n, d)."""
    return [np.bincount(codes[:, c], minlength=k).astype(float) for c, k in enumerate(cards)]


def _pair_counts(codes, cards, a, b):
    """Return the two-way counts (k_a, k_b) of columns a, b of `codes`."""
    flat = np.bincount(codes[:, a] * cards[b] + codes[:, b], minlength=cards[a] * cards[b])
    return flat.reshape(cards[a], cards[b]).astype(float)


def batch_applies(base_codes, cards, calibration):
    """Return whether MST's compression keeps every category of the base (and so of base and target) but with odds < 1e-15."""
    smallest = min(float(x.min()) for x in _counts(base_codes, cards))
    return smallest >= (COMPRESSION + MARGIN) * calibration.one_way


def logsumexp(x, axis=-1, keepdims=False):
    """Return log Σ exp(x) along `axis`, shifted by the maximum (scipy's, without its per-call overhead, which a
    thousand iterations of a batch pay thousands of times)."""
    top = np.max(x, axis=axis, keepdims=True)
    out = top + np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)


def _marginals(theta, total):
    """Return total · softmax(θ) per column (mbi's message passing on one-way cliques)."""
    return [total * np.exp(t - logsumexp(t, axis=1, keepdims=True)) for t in theta]


def _loss(mu, ys, sigmas):
    """Return Σ_c ½‖(μ_c − y_c)/σ_c‖² per run (mbi's L2 loss of linear measurements)."""
    return sum(0.5 * np.sum(((m - y) / s) ** 2, axis=1) for m, y, s in zip(mu, ys, sigmas))


def _lipschitz(ys, sigmas):
    """Return mbi's power-iteration estimate of the loss's Lipschitz constant (its Hessian is diagonal, 1/σ_c²)."""
    h = np.concatenate([np.full(y.shape[1], 1.0 / s**2) for y, s in zip(ys, sigmas)])
    v = np.ones_like(h) / np.sqrt(h.size)
    for _ in range(LIPSCHITZ_STEPS):
        hv = h * v
        estimate = np.linalg.norm(hv)
        v = hv / (estimate + 1e-12)
    return estimate


def one_way_estimate(ys, sigmas, total, iters=ITERATIONS):
    """Return mbi's `mirror_descent` estimate from one-way measurements, for a batch: a list of (runs, k_c) marginals.

    `ys` holds one (runs, k_c) array of noisy counts per column, `sigmas`
    their σ, `total` the known total. Mirror descent on the potentials θ
    (zeros at first), μ = total · softmax(θ) per column, step α = 2/(L ·
    total) then the Armijo line search of mbi (α × 1.01 on a sufficient
    decrease, else × 0.5), each run with its own α.
    """
    runs = ys[0].shape[0]
    theta = [np.zeros_like(y) for y in ys]
    alpha = np.full(runs, 2.0 / (_lipschitz(ys, sigmas) * total))
    mu = _marginals(theta, total)
    loss = _loss(mu, ys, sigmas)
    for _ in range(iters):
        grad = [(m - y) / s**2 for m, y, s in zip(mu, ys, sigmas)]
        theta2 = [t - alpha[:, None] * g for t, g in zip(theta, grad)]
        mu2 = _marginals(theta2, total)
        loss2 = _loss(mu2, ys, sigmas)
        change = sum(np.sum(g * (m - m2), axis=1) for g, m, m2 in zip(grad, mu, mu2))
        accept = loss - loss2 >= 0.5 * alpha * change
        alpha = np.where(accept, 1.01 * alpha, 0.5 * alpha)
        theta = [np.where(accept[:, None], t2, t) for t, t2 in zip(theta, theta2)]
        mu = [np.where(accept[:, None], m2, m) for m, m2 in zip(mu, mu2)]
        loss = np.where(accept, loss2, loss)
    return _marginals(theta, total)


def _weights(codes, cards, estimate, total, pairs):
    """Return MST's selection score of every pair, per run: ‖x_ab − x̂_ab‖₁, x̂ the estimate's independent two-way marginal."""
    out = {}
    for a, b in pairs:
        xhat = estimate[a][:, :, None] * estimate[b][:, None, :] / total
        out[a, b] = np.abs(_pair_counts(codes, cards, a, b)[None] - xhat).sum(axis=(1, 2))
    return out


def _noisy(noise, x, sigma, runs):
    """Return `runs` noisy copies of the counts `x`, the noise MST's own `gaussian_noise(sigma, size)`."""
    return x[None] + np.asarray(noise(sigma, runs * x.size), dtype=float).reshape((runs,) + x.shape)


def _gaussian_llr(y, x0, x1, sigma):
    """Return the log-likelihood ratio, N(x1, σ²) against N(x0, σ²), of each run's measurement y (runs, ...)."""
    t = (x1 - x0).ravel()
    diff = (y - x0[None]).reshape(len(y), -1)
    return (diff @ t - 0.5 * t @ t) / sigma**2


def _tree(choose, weights, llr_weights, pairs, scale, width, run):
    """Return the edges MST draws for one run and their log-likelihood ratio (D1 against D0) given the run's estimates.

    `choose(q, epsilon, sensitivity)` is MST's exponential mechanism; the
    candidates each step are the pairs not yet connected, in MST's order.
    """
    parent, edges, total = list(range(width)), [], 0.0

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for _ in range(width - 1):
        candidates = [e for e in pairs if root(e[0]) != root(e[1])]
        k = int(choose(np.array([weights[e][run] for e in candidates])))
        s0, s1 = (scale * np.array([w[e][run] for e in candidates]) for w in llr_weights)
        total += float((s1[k] - logsumexp(s1)) - (s0[k] - logsumexp(s0)))
        edges.append(candidates[k])
        parent[root(candidates[k][1])] = root(candidates[k][0])
    return edges, total


def batch_scores(codes, base_codes, target_codes, cards, calibration, mst, runs):
    """Return `runs` white-box scores of MST on `codes` (n, d), the pair being base and base + target.

    `mst` is an MST synthesizer (its `exponential_mechanism`) and its
    module (its `gaussian_noise`) as `(synth, module)`. Raises if a run's
    noisy one-way count falls where MST would compress its domain (see
    `batch_applies`: odds below 1e-15), so no run is ever scored on a path
    other than MST's.
    """
    synth, module = mst
    pair_codes = (base_codes, np.vstack([base_codes, target_codes[None]]))
    width, sig1, sig2 = len(cards), calibration.one_way, calibration.two_way
    x1 = _counts(codes, cards)
    ys = [_noisy(module.gaussian_noise, x, sig1, runs) for x in x1]
    if min(float(y.min()) for y in ys) < COMPRESSION * sig1:
        raise RuntimeError("a noisy one-way count fell under 3σ, where MST compresses its domain; the batch path does not")
    score = sum(_gaussian_llr(y, x0, xt, sig1) for y, x0, xt in zip(ys, *(_counts(p, cards) for p in pair_codes)))
    pairs = list(itertools.combinations(range(width), 2))
    estimates = {}
    for n in {len(codes), *(len(p) for p in pair_codes)}:
        estimates[n] = one_way_estimate(ys, [sig1] * width, float(n))
    actual = _weights(codes, cards, estimates[len(codes)], float(len(codes)), pairs)
    hypotheses = [_weights(p, cards, estimates[len(p)], float(len(p)), pairs) for p in pair_codes]

    def choose(q):
        return synth.exponential_mechanism(q, calibration.epsilon, calibration.sensitivity, monotonic=calibration.monotonic)

    cells = max(cards) ** 2
    noise = np.asarray(module.gaussian_noise(sig2, runs * (width - 1) * cells), dtype=float).reshape(runs, width - 1, cells)
    for run in range(runs):
        edges, selected = _tree(choose, actual, hypotheses, pairs, calibration.scale(), width, run)
        score[run] += selected
        for i, (a, b) in enumerate(edges):  # the noise is independent of the choice, so drawn for the batch at once
            x = _pair_counts(codes, cards, a, b)
            y = x + noise[run, i, :x.size].reshape(x.shape)
            x0, xt = (_pair_counts(p, cards, a, b) for p in pair_codes)
            score[run] += float(_gaussian_llr(y[None], x0, xt, sig2)[0])
    return score
