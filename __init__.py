"""dpaudit: empirical privacy auditing, sound ε lower bounds for differentially private mechanisms set beside their theory upper bounds.

This file is the `dpaudit` package itself; the four folders beside it,
mechanisms/, attacks/, audit/ and experiments/, are its subpackages
dpaudit.mechanisms, dpaudit.attacks, dpaudit.audit and dpaudit.experiments,
and `testing.py` beside it is `dpaudit.testing`. It imports none of them,
and reads `__version__` from the installed metadata on first use only, so
`import dpaudit` stays cheap.
"""

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    """Return `__version__` (the installed distribution's version, "0+unknown" when not installed)."""
    if name != "__version__":
        raise AttributeError(f"module 'dpaudit' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dpaudit")
    except PackageNotFoundError:
        return "0+unknown"
