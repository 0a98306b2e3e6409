"""Registry of built-in mechanisms by name: `get_mechanism("laplace", epsilon=1.0)`."""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
from typing import Any, Callable

from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.errors import InvalidParameterError, UnknownMechanismError

__all__ = ["BUILTIN_MODULES", "defaults", "factory", "get_mechanism", "list_mechanisms", "register"]

Factory = Callable[..., Mechanism]
_REGISTRY: dict[str, Factory] = {}
# Importing a module registers its mechanisms; the registry imports them on first use, so importing
# dpaudit.mechanisms loads neither OpenDP nor the other optional libraries.
BUILTIN_MODULES = (
    "dpaudit.mechanisms.canary_targets",
    "dpaudit.mechanisms.floating_point",
    "dpaudit.mechanisms.gaussian",
    "dpaudit.mechanisms.geometric",
    "dpaudit.mechanisms.histograms",
    "dpaudit.mechanisms.laplace",
    "dpaudit.mechanisms.marginals",
    "dpaudit.mechanisms.marginals_buggy",
    "dpaudit.mechanisms.noise",
    "dpaudit.mechanisms.noisy_max",
    "dpaudit.mechanisms.opendp_adapters",
    "dpaudit.mechanisms.pipelinedp_adapters",
    "dpaudit.mechanisms.private_selection",
    "dpaudit.mechanisms.pydp_adapters",
    "dpaudit.mechanisms.randomized_response",
    "dpaudit.mechanisms.sparse_vector",
    "dpaudit.mechanisms.statistics",
    "dpaudit.mechanisms.transforms",
    "dpaudit.mechanisms.tumult_adapters",
    "dpaudit.mechanisms.tumult_analytics_adapters",
)


def register(name: str) -> Callable[[Factory], Factory]:
    """Return a decorator that registers a keyword-only mechanism factory under `name`."""

    def decorate(factory: Factory) -> Factory:
        if name in _REGISTRY:
            raise ValueError(f"A mechanism named '{name}' is registered already.")
        _REGISTRY[name] = factory
        return factory

    return decorate


@functools.cache
def _load_builtins() -> None:
    for module in BUILTIN_MODULES:
        importlib.import_module(module)


def list_mechanisms() -> list[str]:
    """Return the registered names, sorted."""
    _load_builtins()
    return sorted(_REGISTRY)


def factory(name: str) -> Factory:
    """Return the factory registered as `name`, or raise `UnknownMechanismError` with suggestions."""
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(name, _REGISTRY, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else " Run `dpaudit list` to see them."
        raise UnknownMechanismError(f"There is no mechanism named '{name}'.{hint}") from None


def get_mechanism(name: str, **params: Any) -> Mechanism:
    """Return the built-in mechanism `name` built with `params` (its keyword arguments).

    Returns:
        The `Mechanism`, its claim set from the parameters.

    Raises:
        UnknownMechanismError: for a name that is not registered (with close matches).
        InvalidParameterError: for a parameter the factory does not take or refuses.
    """
    build = factory(name)
    accepted = inspect.signature(build).parameters
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise InvalidParameterError(
            f"Mechanism '{name}' has no parameter {unknown[0]!r}; it takes {', '.join(accepted) or 'none'}."
        )
    return build(**params)


def defaults(name: str) -> dict[str, Any]:
    """Return the default parameters of mechanism `name`."""
    return {
        k: p.default
        for k, p in inspect.signature(factory(name)).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
