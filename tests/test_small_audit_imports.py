"""A small audit imports only what it uses: never dp_accounting, statsmodels, scikit-learn or torch (issue 39).

Each check runs in a fresh interpreter (imports already made by other tests
would hide one) and reads `sys.modules` after the audit.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("dp_accounting", "statsmodels", "sklearn", "torch")

AUDIT = """
import json, sys
from dpaudit.audit import audit_mechanism
from dpaudit.mechanisms import get_mechanism
result = audit_mechanism(get_mechanism("laplace", epsilon=1.0), trials=10_000, seed=0)
print(json.dumps({"epsilon": result.lower_bound.epsilon, "upper": result.upper_bound.method,
                  "loaded": [m for m in %r if m in sys.modules]}))
"""

CLI = """
import json, sys
from dpaudit.audit.cli import main
main(["audit", "laplace", "--trials", "10000", "--seed", "0", "--json"])
print(json.dumps([m for m in %r if m in sys.modules]), file=sys.stderr)
"""

ASSERT_PRIVATE = """
import json, sys
from dpaudit.mechanisms import get_mechanism
from dpaudit.testing import assert_private
assert_private(get_mechanism("laplace", epsilon=1.0))
print(json.dumps([m for m in %r if m in sys.modules]))
"""


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code % (HEAVY,)], capture_output=True, text=True, timeout=120, check=True)


def test_a_small_laplace_audit_imports_no_heavy_library():
    out = json.loads(_run(AUDIT).stdout)
    assert out["loaded"] == []
    assert out["upper"] == "exact" and 0.0 < out["epsilon"] < 1.0


def test_a_small_cli_audit_imports_no_heavy_library():
    done = _run(CLI)
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
    assert json.loads(done.stdout)["upper_bound"] == {"epsilon": 1.0, "delta": 0.0, "method": "exact"}


def test_assert_private_on_laplace_imports_no_heavy_library():
    assert json.loads(_run(ASSERT_PRIVATE).stdout.strip().splitlines()[-1]) == []


def test_reading_the_event_still_gives_the_dp_accounting_event():
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    from dpaudit.mechanisms import get_mechanism

    mech = get_mechanism("laplace", epsilon=0.5, sensitivity=2.0)
    assert mech.declared_event().kind == "LaplaceDpEvent"
    assert mech.event == dp_event.LaplaceDpEvent(noise_multiplier=2.0)  # scale Δ/ε = 4, relative to Δ = 2
    assert isinstance(mech.declared_event(), dp_event.LaplaceDpEvent)  # built once, then kept
