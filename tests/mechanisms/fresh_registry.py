"""The names a fresh interpreter registers, for the adapters whose registration depends on an environment variable."""

from __future__ import annotations

import os
import subprocess
import sys


def registered(listed: str, variable: str, value: str | None) -> list[str]:
    """Return the names the code `listed` prints in a fresh interpreter with `variable` set to `value` (unset: None)."""
    env = {k: v for k, v in os.environ.items() if k != variable}
    if value is not None:
        env[variable] = value
    done = subprocess.run([sys.executable, "-c", listed], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()
