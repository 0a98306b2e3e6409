"""Gradient canaries in a user's own Opacus loop: invisible outside hooked_run, sampled, clipped and noised like examples inside it."""

import importlib
import threading

import numpy as np
import pytest
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.hook import hooked_run, watch
from scipy import stats

torch = pytest.importorskip("torch")
opacus = pytest.importorskip("opacus")
loops = importlib.import_module("opacus_loops")

DIGITS = load_data("digits")
N = DIGITS.rows
QUIET = [0, 64, 128]  # the weights of pixel 0, blank in every digit, for classes 0, 1 and 2: no data reaches them
BIAS = 640  # logistic regression's flat layout: the (10, 64) weight, then the 10 biases
TINY = 1e-6  # noise multiplier small enough that each update is the clipped sum to float32 precision


pytestmark = pytest.mark.usefixtures("quiet_opacus")


def _dirac(size, coordinates, norm):
    """Return one canary per coordinate, each the basis vector there times `norm`."""
    gradients = np.zeros((len(coordinates), size))
    gradients[np.arange(len(coordinates)), coordinates] = norm
    return gradients


def _run(train, gradients=None, *, seed=7, probe=False):
    """Return (final parameters, record) of one hooked run; training randomness from seed 0, the canaries' from `seed`."""
    with hooked_run(gradients, np.random.default_rng(seed), rows=N, probe=probe) as record:
        final = train(DIGITS.x, DIGITS.y, np.random.default_rng(0))
    return final, record


def test_watch_changes_nothing_outside_a_hooked_run(monkeypatch):
    train = loops.make_train("logreg", noise_multiplier=1.0, batch_size=180, steps=5)
    watched = train(DIGITS.x, DIGITS.y, np.random.default_rng(0))
    in_probe, _ = _run(train, probe=True)
    monkeypatch.setattr(loops, "watch", lambda optimizer: optimizer)
    plain = train(DIGITS.x, DIGITS.y, np.random.default_rng(0))
    assert np.array_equal(watched, plain) and np.array_equal(in_probe, plain)


@pytest.mark.parametrize("model, coordinate, steps", [("logreg", QUIET[0], 5), ("logreg", BIAS, 1), ("cnn", 36, 1)])
def test_a_dirac_canary_at_q_1_is_clipped_to_c_in_every_step(model, coordinate, steps):
    # Σ clipped + noise moves the canary's coordinate by −lr·C/B more than the data alone does; no other coordinate
    # moves differently (a quiet weight never reaches the loss; with one step θ₀ and the data's gradients are shared).
    lr, c = 0.5, 2.0
    train = loops.make_train(model, noise_multiplier=TINY, clip_norm=c, steps=steps, learning_rate=lr)
    without, _ = _run(train)
    final, record = _run(train, _dirac(len(without), [coordinate], 10 * c))
    expected = np.zeros_like(without)
    expected[coordinate] = -lr * c * steps / N
    np.testing.assert_allclose(final - without, expected, rtol=1e-4, atol=1e-7)
    assert np.array_equal(np.delete(final, coordinate), np.delete(without, coordinate))
    assert len(record.iterates) == steps + 1 and np.allclose(record.iterates[-1], final)


def test_canaries_are_poisson_sampled_at_expected_batch_size_over_rows():
    # Opacus samples at 1/⌈1797/180⌉ = 0.1 and scales by int(0.1·1797) = 179, so q = 179/1797; each step draws one
    # uniform per canary from the canaries' rng, and a canary's quiet weight moves by −lr·C/179 exactly when included.
    lr, c, steps, seed = 1.0, 1.0, 100, 3
    train = loops.make_train("logreg", noise_multiplier=TINY, clip_norm=c, batch_size=180, steps=steps, learning_rate=lr)
    _, record = _run(train, _dirac(650, QUIET, 10 * c), seed=seed)
    q = 179 / N
    moved = -np.diff(np.stack(record.iterates)[:, QUIET], axis=0) * 179 / (lr * c)
    included = np.random.default_rng(seed).random((steps, len(QUIET))) < q
    np.testing.assert_allclose(moved, included.astype(float), atol=1e-3)
    low, high = stats.binom.interval(0.999, steps * len(QUIET), q)
    assert low <= included.sum() <= high
    assert record.settings == {"noise_multiplier": TINY, "clip_norm": c, "expected_batch_size": 179, "learning_rate": lr,
                               "sample_rate": q, "plain_sgd": True, "steps": steps}


@pytest.mark.parametrize("mode", ["functorch", "ew"])
def test_other_grad_sample_modes_take_canaries(mode):
    train = loops.make_train("logreg", noise_multiplier=TINY, steps=2, learning_rate=1.0, grad_sample_mode=mode)
    without, _ = _run(train)
    final, _ = _run(train, _dirac(650, [QUIET[0]], 10.0))
    assert final[QUIET[0]] - without[QUIET[0]] == pytest.approx(-2.0 / N, rel=1e-4)


def test_a_probe_records_sizes_biases_and_the_first_steps_absolute_gradients():
    train = loops.make_train("logreg", noise_multiplier=TINY, steps=2)
    _, record = _run(train, probe=True)
    assert record.sizes == [640, 10] and record.size == 650 and record.bias_mask.sum() == 10 and record.bias_mask[BIAS:].all()
    w, b = record.iterates[0][:640].reshape(10, 64), record.iterates[0][BIAS:]
    z = DIGITS.x @ w.T + b
    p = np.exp(z - z.max(axis=1, keepdims=True))
    residual = np.abs(p / p.sum(axis=1, keepdims=True) - np.eye(10)[DIGITS.y])  # |∂loss/∂logits| of each example
    expected = np.concatenate([(residual.T @ DIGITS.x).reshape(-1), residual.sum(axis=0)])
    np.testing.assert_allclose(record.activity, expected, rtol=1e-4)
    assert record.activity[QUIET].max() == 0.0


def test_an_empty_real_batch_still_takes_its_canary():
    module = torch.nn.Linear(4, 3)
    data = torch.utils.data.TensorDataset(torch.rand(8, 4), torch.randint(0, 3, (8,)))
    module, optimizer, _ = opacus.PrivacyEngine().make_private(
        module=module, optimizer=torch.optim.SGD(module.parameters(), lr=0.5), data_loader=torch.utils.data.DataLoader(data, 8),
        noise_multiplier=TINY, max_grad_norm=1.0, poisson_sampling=True)
    canary = np.full((1, 15), 1.0)
    with hooked_run(canary, np.random.default_rng(0), rows=8) as record:
        optimizer = watch(optimizer)
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(module(torch.rand(0, 4)), torch.zeros(0, dtype=torch.int64)).backward()
        optimizer.step()
    np.testing.assert_allclose(record.iterates[1] - record.iterates[0], -0.5 * canary[0] / np.sqrt(15) / 8, rtol=1e-4)


def test_virtual_steps_take_the_canary_once_per_logical_step():
    from opacus.utils.batch_memory_manager import BatchMemoryManager

    module = torch.nn.Linear(64, 10)
    data = torch.utils.data.TensorDataset(torch.as_tensor(DIGITS.x), torch.as_tensor(DIGITS.y))
    module, optimizer, loader = opacus.PrivacyEngine().make_private(
        module=module, optimizer=torch.optim.SGD(module.parameters(), lr=1.0),
        data_loader=torch.utils.data.DataLoader(data, N, generator=torch.Generator().manual_seed(0)),
        noise_multiplier=TINY, max_grad_norm=1.0, poisson_sampling=True)
    optimizer = watch(optimizer)
    with hooked_run(_dirac(650, [QUIET[0]], 10.0), np.random.default_rng(0), rows=N) as record:
        for _ in range(2):
            with BatchMemoryManager(data_loader=loader, max_physical_batch_size=500, optimizer=optimizer) as physical:
                for x, y in physical:
                    optimizer.zero_grad()
                    torch.nn.functional.cross_entropy(module(x), y).backward()
                    optimizer.step()
    assert len(record.iterates) == 3 and record.settings["steps"] == 2
    np.testing.assert_allclose(np.diff(np.stack(record.iterates)[:, QUIET[0]]), -1.0 / N, rtol=1e-4)


@pytest.mark.parametrize("bug, coordinate, c, factor", [
    ("no-clipping", QUIET[0], 1.0, 10.0),
    ("bias-unclipped", BIAS, 1.0, 10.0),
    ("bias-unclipped", QUIET[0], 1.0, 1.0),
    ("clip-batch-mean", QUIET[0], 20.0, 10.0),  # a mean of gradients of norm ≤ √130 < 20 is never clipped
])
def test_a_users_clipping_subclass_sees_the_canaries(bug, coordinate, c, factor):
    lr = 0.5
    train = loops.make_train("logreg", bug, noise_multiplier=TINY, clip_norm=c, steps=1, learning_rate=lr)
    without, _ = _run(train)
    final, _ = _run(train, _dirac(650, [coordinate], 10 * c))
    assert final[coordinate] - without[coordinate] == pytest.approx(-lr * factor * c / N, rel=1e-4)


@pytest.mark.parametrize("bug, std", [(None, 10.0), ("noise-unscaled", 1.0)])
def test_noise_on_quiet_weights_is_sigma_c_unless_unscaled(bug, std):
    # No data reaches the 30 weights of the three blank pixels: each step moves them by −lr·N(0, std²)/B.
    quiet = [c * 64 + f for c in range(10) for f in DIGITS.unused_features()]
    train = loops.make_train("logreg", bug, noise_multiplier=1.0, clip_norm=10.0, steps=10, learning_rate=1.0)
    _, record = _run(train)
    noise = np.diff(np.stack(record.iterates)[:, quiet], axis=0) * N
    assert noise.std() == pytest.approx(std, rel=0.15)


def test_accountant_rate_claims_a_tenth_of_the_rate_of_the_same_code():
    settings = dict(noise_multiplier=2.0, batch_size=N, rows=N, steps=10)
    assert loops.claim_epsilon(**settings) == pytest.approx(7.511, abs=2e-3)
    assert loops.claim_epsilon(**settings, bug="accountant-rate") == pytest.approx(0.798, abs=2e-3)
    train = loops.make_train("logreg", noise_multiplier=2.0, steps=2)
    buggy = loops.make_train("logreg", "accountant-rate", noise_multiplier=2.0, steps=2)
    assert np.array_equal(train(DIGITS.x, DIGITS.y, 1), buggy(DIGITS.x, DIGITS.y, 1))


def test_misuse_is_one_sentence(monkeypatch):
    with pytest.raises(InvalidParameterError, match=r"^watch\(\) needs the DPOptimizer .*; got SGD\.$"):
        watch(torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1))
    with pytest.raises(InvalidParameterError, match="cannot be nested"):
        with hooked_run(None, 0, rows=N), hooked_run(None, 0, rows=N):
            pass
    with pytest.raises(InvalidParameterError, match="probe run inserts nothing"):
        with hooked_run(np.zeros((1, 650)), 0, rows=N, probe=True):
            pass
    with pytest.raises(InvalidParameterError, match="'rows' parameter"):
        with hooked_run(None, 0, rows=0):
            pass
    train = loops.make_train("logreg", steps=1)
    with pytest.raises(MechanismError, match="canary gradients have 3 coordinates but the optimizer trains 650"):
        _run(train, np.zeros((1, 3)))
    monkeypatch.setattr(loops, "watch", lambda optimizer: optimizer)
    final, record = _run(train, np.zeros((1, 650)))
    assert not record.hooked and record.iterates == [] and final.shape == (650,)


def test_two_optimizers_in_one_run_are_refused():
    train = loops.make_train("logreg", steps=1)

    def twice(x, y, rng):
        return train(x, y, rng), train(x, y, rng)

    with pytest.raises(MechanismError, match="Two different optimizers"):
        with hooked_run(None, 0, rows=N):
            twice(DIGITS.x, DIGITS.y, 0)


def test_the_context_belongs_to_its_thread():
    train = loops.make_train("logreg", noise_multiplier=TINY, steps=2)
    alone = train(DIGITS.x, DIGITS.y, 0)
    results = []
    with hooked_run(_dirac(650, [QUIET[0]], 10.0), 0, rows=N) as record:
        worker = threading.Thread(target=lambda: results.append(train(DIGITS.x, DIGITS.y, 0)))
        worker.start()
        worker.join()
    assert not record.hooked and np.array_equal(results[0], alone)
