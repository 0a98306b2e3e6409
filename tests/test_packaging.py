"""Every folder of Python files that installs under `dpaudit` is a listed package (else setuptools warns at every install)."""

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_every_folder_of_python_files_is_a_listed_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed, folders = set(config["packages"]), dict(config["package-dir"])
    folders.pop("dpaudit")  # the root: its own files; its sub-packages are mapped one by one, or are its folders below
    for init in ROOT.glob("*/__init__.py"):
        folders.setdefault(f"dpaudit.{init.parent.name}", init.parent.name)
    found = set()
    for package, folder in folders.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.parent.relative_to(ROOT / folder).parts
            if "__pycache__" not in parts:
                found.add(".".join((package, *parts)))
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
