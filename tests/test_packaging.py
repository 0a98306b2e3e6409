"""Every folder of Python files that installs under `dpaudit` is a listed package (else setuptools warns at every install)."""

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_every_folder_of_python_files_is_a_listed_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed, folders = set(config["packages"]), config["package-dir"]
    found = set()
    for package, folder in folders.items():
        if package == "dpaudit":
            continue  # the root: its own files only; the sub-packages are mapped one by one
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.parent.relative_to(ROOT / folder).parts
            if "__pycache__" not in parts:
                found.add(".".join((package, *parts)))
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
