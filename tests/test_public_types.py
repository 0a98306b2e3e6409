"""A type checker sees the real type of every lazy name of `dpaudit.audit` (its `TYPE_CHECKING` block), not `Any`.

mypy reads the package from a folder that links `dpaudit` to this
repository (an editable install hides it behind an import hook), follows
imports silently and reveals the type of each public name.
"""

import re
import subprocess
import sys
from pathlib import Path

import dpaudit.audit as audit
import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_every_public_name_of_dpaudit_audit_has_its_real_type(tmp_path):
    pytest.importorskip("mypy")
    (tmp_path / "packages").mkdir()
    (tmp_path / "packages" / "dpaudit").symlink_to(ROOT, target_is_directory=True)
    snippet = tmp_path / "surface.py"
    snippet.write_text("import dpaudit.audit as audit\n" + "".join(f"reveal_type(audit.{n})\n" for n in audit.__all__))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--ignore-missing-imports", "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), str(snippet)],
        capture_output=True, text=True, env={"MYPYPATH": str(tmp_path / "packages"), "PATH": ""}, cwd=tmp_path,
    )
    revealed = re.findall(r"surface\.py:(\d+): note: Revealed type is \"(.*)\"", done.stdout)
    assert len(revealed) == len(audit.__all__), done.stdout + done.stderr
    untyped = [audit.__all__[int(line) - 2] for line, kind in revealed if kind == "Any"]
    assert not untyped, f"a type checker sees these names as Any: {untyped}"
