"""Argument helpers shared by the subcommands: mechanism resolution and `--param k=v` parsing."""

from __future__ import annotations

import argparse
import ast
import importlib
from typing import Any, Sequence

from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.errors import InvalidParameterError, UnknownMechanismError
from dpaudit.mechanisms.registry import get_mechanism


def _parse_value(text: str) -> Any:
    """Return `text` as a Python literal when it is one (1, 0.5, True, [1, 2]), else as a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_params(pairs: Sequence[str] | None) -> dict[str, Any]:
    """Return the `--param k=v` pairs as a dict of parsed values."""
    params: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidParameterError(f"The --param value {pair!r} is not of the form key=value.")
        params[key.strip()] = _parse_value(value.strip())
    return params


def load_attribute(reference: str) -> Any:
    """Return the object named by `module:attr`, or raise `UnknownMechanismError` saying why not."""
    module_name, _, attr = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import failure of user code is one sentence
        raise UnknownMechanismError(f"Cannot import module '{module_name}' of '{reference}': {str(exc).rstrip('.')}.") from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        raise UnknownMechanismError(f"Module '{module_name}' has no attribute '{attr}'.") from None


def resolve_mechanism(
    name: str, params: dict[str, Any], epsilon: float | None, delta: float | None
) -> Mechanism:
    """Return the mechanism `name` (registry name or `module:attr`) with its claim set.

    For a built-in, `epsilon`/`delta` are calibration parameters (and so the
    claim); for `module:attr` (a `Mechanism`, or a factory returning one) they
    override the claim to test.
    """
    if ":" not in name:
        if epsilon is not None:
            params.setdefault("epsilon", epsilon)
        if delta is not None:
            params.setdefault("delta", delta)
        return get_mechanism(name, **params)
    obj = load_attribute(name)
    if isinstance(obj, Mechanism) and params:
        raise InvalidParameterError(
            f"'{name}' is a Mechanism, which takes no --param ({', '.join(params)}); "
            "to pass parameters, point at a function returning the Mechanism."
        )
    if not isinstance(obj, Mechanism) and callable(obj):
        obj = _call_factory(name, obj, params)
    if not isinstance(obj, Mechanism):
        raise UnknownMechanismError(
            f"'{name}' is neither a Mechanism nor a factory returning one (wrap functions with dpaudit.mechanisms.blackbox)."
        )
    return obj.with_claim(epsilon, delta)


def _call_factory(name: str, factory: Any, params: dict[str, Any]) -> Any:
    """Return factory(**params), or raise `UnknownMechanismError` when it is not a working factory."""
    try:
        return factory(**params)
    except Exception as exc:  # user code: any failure becomes one sentence
        raise UnknownMechanismError(
            f"'{name}' is callable but calling it with {params or 'no parameters'} failed "
            f"({type(exc).__name__}: {exc}); pass a Mechanism, a factory returning one, "
            "or wrap a function fn(data, rng) with dpaudit.mechanisms.blackbox."
        ) from exc


def add_mechanism_arguments(parser: argparse.ArgumentParser) -> None:
    """Add NAME, --param, --epsilon and --delta to `parser`."""
    parser.add_argument("name", metavar="NAME", help="a built-in mechanism (see `dpaudit list`) or module:attr")
    parser.add_argument("--param", action="append", metavar="K=V", help="a mechanism parameter (repeatable)")
    parser.add_argument("--epsilon", type=float, help="ε the built-in is calibrated to, or the claim to test")
    parser.add_argument("--delta", type=float, help="δ the built-in is calibrated to, or the claim to test")
