"""Per-example gradients of many runs at once, summed with scales, are torch.func's per-example gradients summed."""

import numpy as np
import pytest
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.dpsgd.data import load_data
from dpaudit.mechanisms.dpsgd.flat_model import FlatModel
from dpaudit.mechanisms.dpsgd.linear_stack import LinearStack

torch = pytest.importorskip("torch")

DIGITS = load_data("digits")
RUNS, BATCH = 3, 7


def _setting(name, seed=0):
    """Return a model, R runs' parameters (R, P), each run's examples (R, B, F) and labels (R, B)."""
    model = FlatModel(name, features=DIGITS.features, classes=DIGITS.classes)
    rng = np.random.default_rng(seed)
    theta = torch.stack([model.initial(rng) * 3 for _ in range(RUNS)])
    rows = rng.choice(DIGITS.rows, size=(RUNS, BATCH))
    return model, theta, torch.as_tensor(DIGITS.x[rows]), torch.as_tensor(DIGITS.y[rows])


def _reference(model, theta, x, y):
    """Return the (R, B, P) per-example gradients of torch.func, one run at a time."""
    return torch.stack([model.per_example_gradients(t, xs, ys) for t, xs, ys in zip(theta, x, y)])


def _sums(stack, theta, x, y, scales):
    """Return LinearStack's sums of the examples (R, B, F) with `scales`, and the squared norms it passed to them."""
    seen = []

    def record(weights, biases):
        seen.append((weights.clone(), biases.clone()))
        return scales(weights, biases)

    ones = torch.ones(*x.shape[:-1], 1)
    sums = stack.example_sums(theta, torch.cat([x, ones], dim=-1).transpose(-1, -2), (x * x).sum(dim=-1), y, record)
    return sums, seen[0]


@pytest.mark.parametrize("name", ["logreg", "mlp"])
def test_each_example_its_norms_and_scaled_sums_are_torch_funcs(name):
    model, theta, x, y = _setting(name)
    stack, reference = LinearStack(model), _reference(model, theta, x, y)
    bias = torch.as_tensor(model.bias_mask)
    for b in range(BATCH):
        one = torch.zeros(RUNS, BATCH)
        one[:, b] = 1.0
        sums, (weights, biases) = _sums(stack, theta, x, y, lambda w, v, one=one: (one, one))
        assert torch.allclose(sums, reference[:, b], rtol=1e-5, atol=1e-6)
    assert torch.allclose(weights, (reference * ~bias).square().sum(dim=2), rtol=1e-5)
    assert torch.allclose(biases, (reference * bias).square().sum(dim=2), rtol=1e-5)
    scales = torch.rand(RUNS, BATCH, generator=torch.Generator().manual_seed(1))
    sums, _ = _sums(stack, theta, x, y, lambda w, v: (scales, scales))
    assert torch.allclose(sums, (reference * scales.unsqueeze(2)).sum(dim=1), rtol=1e-5, atol=1e-6)
    sums, _ = _sums(stack, theta, x, y, lambda w, v: (scales, torch.ones(RUNS, BATCH)))
    split = (reference * torch.where(bias, 1.0, scales.unsqueeze(2))).sum(dim=1)
    assert torch.allclose(sums, split, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["logreg", "mlp"])
def test_inputs_shared_by_every_run_give_the_same_sums(name):
    model, theta, x, y = _setting(name, seed=2)
    stack = LinearStack(model)
    scales = torch.rand(RUNS, BATCH, generator=torch.Generator().manual_seed(3))
    shared, _ = _sums(stack, theta, x[0], y[0], lambda w, v: (scales, scales))
    apart, _ = _sums(stack, theta, x[:1].expand(RUNS, -1, -1), y[:1].expand(RUNS, -1), lambda w, v: (scales, scales))
    reference = _reference(model, theta, x[:1].expand(RUNS, -1, -1), y[:1].expand(RUNS, -1))
    assert torch.allclose(shared, (reference * scales.unsqueeze(2)).sum(dim=1), rtol=1e-5, atol=1e-6)
    assert torch.allclose(shared, apart, rtol=1e-5, atol=1e-6)


def test_a_model_that_is_no_chain_of_linear_and_tanh_layers_is_refused():
    model = FlatModel("mlp", features=4, classes=2)
    model.module = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    with pytest.raises(InvalidParameterError, match="linear layers with biases and tanh"):
        LinearStack(model)
