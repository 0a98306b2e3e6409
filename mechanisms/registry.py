"""Registry of built-in mechanisms by name: `get_mechanism("laplace", epsilon=1.0)`."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import inspect
from typing import Any, Callable, Literal

from dpaudit.errors import InvalidParameterError, UnknownMechanismError
from dpaudit.mechanisms.base import Mechanism

__all__ = ["BUILTIN_MODULES", "Registration", "defaults", "factory", "get_mechanism", "list_mechanisms", "register", "registration"]

Factory = Callable[..., Mechanism]
Verdict = Literal["consistent", "violation"]


@dataclasses.dataclass(frozen=True)
class Registration:
    """A registered mechanism: its factory and what is known of it at its default parameters.

    Attributes:
        factory: the keyword-only function that builds it.
        expected: the verdict a sound and powerful audit gives it ("violation"
            for a known-broken variant, "consistent" for a correct one), None
            when nothing is known (a user's registration); the suite checks its
            verdicts against it.
        suite_trials: its suite cost, a multiple of the suite's trial budget
            (below 1 for slow samplers, above 1 where the default audit needs
            more samples to be informative).
        environment: the library environment building it needs
            (`dpaudit.mechanisms.environments`), or None: `ready` says
            whether it is built, so listing and the suite build nothing.
    """

    factory: Factory
    expected: Verdict | None = None
    suite_trials: float = 1.0
    environment: str | None = None

    def ready(self) -> bool:
        """Return True when building the mechanism builds nothing first: it needs no environment, or its own is built."""
        if self.environment is None:
            return True
        from dpaudit.mechanisms.environments import environment_exists

        return environment_exists(self.environment)


_REGISTRY: dict[str, Registration] = {}
# Importing a module registers its mechanisms; the registry imports them on first use, so importing
# dpaudit.mechanisms loads neither OpenDP nor the other optional libraries.
BUILTIN_MODULES = (
    "dpaudit.mechanisms.builtins.canary_targets",
    "dpaudit.mechanisms.builtins.floating_point",
    "dpaudit.mechanisms.builtins.gaussian",
    "dpaudit.mechanisms.builtins.geometric",
    "dpaudit.mechanisms.builtins.histograms",
    "dpaudit.mechanisms.builtins.laplace",
    "dpaudit.mechanisms.builtins.marginals",
    "dpaudit.mechanisms.builtins.marginals_buggy",
    "dpaudit.mechanisms.builtins.noise",
    "dpaudit.mechanisms.builtins.noisy_max",
    "dpaudit.mechanisms.builtins.private_selection",
    "dpaudit.mechanisms.builtins.randomized_response",
    "dpaudit.mechanisms.builtins.sparse_vector",
    "dpaudit.mechanisms.builtins.statistics",
    "dpaudit.mechanisms.transforms",
    "dpaudit.mechanisms.adapters.diffprivlib",
    "dpaudit.mechanisms.adapters.opacus",
    "dpaudit.mechanisms.adapters.opendp",
    "dpaudit.mechanisms.adapters.opendp_0_4",
    "dpaudit.mechanisms.adapters.opendp_sized_sum",
    "dpaudit.mechanisms.adapters.pipelinedp",
    "dpaudit.mechanisms.adapters.pydp",
    "dpaudit.mechanisms.adapters.smartnoise_sql",
    "dpaudit.mechanisms.adapters.synth",
    "dpaudit.mechanisms.adapters.tumult_analytics",
    "dpaudit.mechanisms.adapters.tumult_core",
)


def register(name: str, *, expected: Verdict | None = None, suite_trials: float = 1.0,
             environment: str | None = None) -> Callable[[Factory], Factory]:
    """Return a decorator that registers a keyword-only mechanism factory under `name` (see `Registration`)."""
    if expected not in (None, "consistent", "violation"):
        raise InvalidParameterError(f"The expected verdict of '{name}' must be 'consistent', 'violation' or None; got {expected!r}.")

    def decorate(factory: Factory) -> Factory:
        if name in _REGISTRY:
            raise ValueError(f"A mechanism named '{name}' is registered already.")
        _REGISTRY[name] = Registration(factory, expected, suite_trials, environment)
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


def registration(name: str) -> Registration:
    """Return the registration of `name`, or raise `UnknownMechanismError` with suggestions."""
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(name, _REGISTRY, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else " Run `dpaudit list` to see them."
        raise UnknownMechanismError(f"There is no mechanism named '{name}'.{hint}") from None


def factory(name: str) -> Factory:
    """Return the factory registered as `name`, or raise `UnknownMechanismError` with suggestions."""
    return registration(name).factory


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
