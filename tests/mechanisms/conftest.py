"""Fixtures shared by the tests of library adapters."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest
from dpaudit.mechanisms import get_mechanism
from dpaudit.mechanisms.base import Mechanism


@pytest.fixture(scope="module")
def built() -> Iterator[Callable[..., Mechanism]]:
    """Return a function building a registered mechanism by name; each one's side process is stopped after the module
    (stopping is idempotent, so mechanisms that share one process are safe)."""
    made: list[Any] = []

    def build(name: str, **params: Any) -> Mechanism:
        made.append(get_mechanism(name, **params))
        return made[-1]

    yield build
    for mech in made:
        mech.sampler.close()
