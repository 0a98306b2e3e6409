"""Many runs' parameters of one model at once, and their per-example gradients summed with scales (einsum, no (R, B, P) tensor).

The models of `models.py` are chains of linear layers with tanh between
them. For a linear layer z = W a + b, one example's loss gradient is
δ ⊗ a for W and δ for b, δ = ∂loss/∂z, and δ is back-propagated through
W and tanh by hand: δ_L = softmax(z_L) − onehot(y) for the cross-entropy
of the last layer, δ_{ℓ−1} = (W_ℓᵀ δ_ℓ) ⊙ (1 − a_{ℓ−1}²). So each
example's squared gradient norm is Σ_ℓ ‖δ_ℓ‖²(‖a_{ℓ−1}‖² + 1) and a sum
of the examples' gradients, each with its own scale, is one matrix product
per layer (Goodfellow's per-example norm trick, "Efficient per-example
gradient computations", 2015). These are the gradients
`FlatModel.per_example_gradients` gives, up to float32 rounding (the tests
compare them).

Layout: R runs' parameters are rows of θ (R, P), in `FlatModel`'s order;
activations are feature-major, (R, width + 1, B) for B examples of each
run, or (width + 1, B) for inputs shared by every run, their last feature
1 so that a layer's bias rides along with its weights: z = [W b]·[a; 1].
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.dpsgd.flat_model import FlatModel

__all__ = ["LinearStack"]

Scales = Callable[[Any, Any], tuple[Any, Any]]


@dataclasses.dataclass(frozen=True)
class _Factors:
    """Per-example gradients of R runs on B examples each, layer by layer: [W_ℓ b_ℓ]'s is δ_ℓ ⊗ [a_{ℓ−1}; 1].

    `deltas[ℓ]` (R, out_ℓ, B); `inputs[ℓ]` (R, in_ℓ + 1, B) or (in_ℓ + 1, B);
    `input_squares[ℓ]` the examples' ‖a_{ℓ−1}‖², (R, B) or (B,).
    """

    deltas: list[Any]
    inputs: list[Any]
    input_squares: list[Any]


class LinearStack:
    """`model`'s module (a linear layer, or linear layers with tanh between them) evaluated for many runs at once."""

    def __init__(self, model: FlatModel) -> None:
        self.torch = model.torch
        self.size = model.size
        self.shapes = _linear_shapes(model)

    def example_sums(self, theta: Any, x: Any, x_squares: Any, y: Any, scales: Scales) -> Any:
        """Return each run's per-example loss gradients at θ (R, P), summed with scales: Σ_b (s_b·g_b for W, t_b·g_b for b).

        x are the inputs with a last feature of ones, (F + 1, B) shared by
        every run or (R, F + 1, B); `x_squares` their squared norms without
        that feature ((B,) or (R, B)); y the labels ((B,) or (R, B)).
        `scales(weight_squares, bias_squares)` gets each example's squared
        gradient norm over the weights and over the biases (both (R, B)) and
        returns the scales (s, t) (R, B); when t is s, one product per layer
        sums both.
        """
        factors = self._factors(self._augmented(theta), x, x_squares, y)
        weight_scales, bias_scales = scales(*self._squared_norms(factors))
        return self._weighted_sums(factors, weight_scales, bias_scales)

    def _augmented(self, theta: Any) -> list[Any]:
        """Return each layer's [W b] (R, out, in + 1), from θ (R, P)."""
        out, start = [], 0
        for rows, cols in self.shapes:
            weight = theta[:, start:start + rows * cols].view(-1, rows, cols)
            start += rows * cols
            out.append(self.torch.cat([weight, theta[:, start:start + rows].unsqueeze(2)], dim=2))
            start += rows
        return out

    def _factors(self, layers: list[Any], x: Any, x_squares: Any, y: Any) -> _Factors:
        """Return the per-example gradients, factored, of inputs x with labels y under each run's layers [W b]."""
        torch = self.torch
        inputs, squares = [x], [x_squares]
        for layer in layers[:-1]:
            linear = _product(layer, inputs[-1])
            hidden = linear.new_ones((linear.shape[0], linear.shape[1] + 1, linear.shape[2]))
            torch.tanh(linear, out=hidden[:, :-1])
            inputs.append(hidden)
            squares.append((hidden[:, :-1] ** 2).sum(dim=1))
        delta = _softmax_in_place(_product(layers[-1], inputs[-1]))
        labels = y.expand(delta.shape[0], -1).unsqueeze(1)
        delta.scatter_add_(1, labels, torch.full(labels.shape, -1.0, dtype=delta.dtype, device=delta.device))
        deltas = [delta]
        for layer, hidden in zip(reversed(layers[1:]), reversed(inputs[1:])):
            back = layer[:, :, :-1].transpose(1, 2) @ deltas[0]
            deltas.insert(0, back.mul_(1.0 - hidden[:, :-1] ** 2))
        return _Factors(deltas, inputs, squares)

    def _squared_norms(self, factors: _Factors) -> tuple[Any, Any]:
        """Return each example's squared gradient norm over the weights and over the biases, both (R, B)."""
        weights, biases = 0.0, 0.0
        for delta, square in zip(factors.deltas, factors.input_squares):
            delta_square = self.torch.linalg.vecdot(delta, delta, dim=1)
            weights = weights + delta_square * square
            biases = biases + delta_square
        return weights, biases

    def _weighted_sums(self, factors: _Factors, weight_scales: Any, bias_scales: Any) -> Any:
        """Return Σ_b (s_b·g_b for W, t_b·g_b for b) (R, P); scales the deltas in place (the factors are used up)."""
        parts = []
        for delta, inputs in zip(factors.deltas, factors.inputs):
            own_biases = None if bias_scales is weight_scales else (delta @ bias_scales.unsqueeze(2)).squeeze(2)
            summed = delta.mul_(weight_scales.unsqueeze(1)) @ inputs.transpose(-1, -2)
            parts += [summed[:, :, :-1].flatten(1), summed[:, :, -1] if own_biases is None else own_biases]
        return self.torch.cat(parts, dim=1)


def _product(layer: Any, inputs: Any) -> Any:
    """Return [W b]·[a; 1] for every run (R, out, B): one matrix product when the inputs are shared ((in + 1, B))."""
    if inputs.dim() == 2:
        return (layer.reshape(-1, layer.shape[-1]) @ inputs).view(len(layer), layer.shape[1], -1)
    return layer @ inputs


def _softmax_in_place(logits: Any) -> Any:
    """Return softmax over dim 1 (the classes), computed in the logits' own memory."""
    logits.sub_(logits.amax(dim=1, keepdim=True)).exp_()
    return logits.div_(logits.sum(dim=1, keepdim=True))


def _linear_shapes(model: FlatModel) -> list[tuple[int, int]]:
    """Return the (out, in) shape of each linear layer of `model`, or raise if it is not a chain of linear and tanh layers."""
    nn = model.torch.nn
    modules = list(model.module) if isinstance(model.module, nn.Sequential) else [model.module]
    kinds = [type(m) for m in modules]
    linear_then_tanh = all(k is (nn.Linear if i % 2 == 0 else nn.Tanh) for i, k in enumerate(kinds)) and len(kinds) % 2 == 1
    if not linear_then_tanh or any(m.bias is None for m in modules[::2]):
        raise InvalidParameterError("Runs are trained side by side only for linear layers with biases and tanh between them.")
    return [(m.out_features, m.in_features) for m in modules[::2]]
