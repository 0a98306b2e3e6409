"""dpaudit: empirical privacy auditing, sound ε lower bounds for differentially private mechanisms set beside their theory upper bounds.

This file is the `dpaudit` package itself; the four folders beside it,
mechanisms/, attacks/, audit/ and experiments/, are its subpackages
dpaudit.mechanisms, dpaudit.attacks, dpaudit.audit and dpaudit.experiments.
It imports none of them, so `import dpaudit` stays cheap.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dpaudit")
except PackageNotFoundError:
    __version__ = "0+unknown"

__all__ = ["__version__"]
