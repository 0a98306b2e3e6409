"""The README and the site keep their promises: a short README, its ten-line audit, every file a page names, every
CLI flag in the CLI reference, every public name in the API reference, and `mkdocs build --strict` passing."""

from __future__ import annotations

import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from documented import COMMAND_LIKE, ROOT, blocks, is_console, pages

SUBCOMMANDS = ["list", "audit", "suite", "canary", "one-run", "trace", "dpsgd", "experiment", "env"]
BOUNDS = ["compose", "gaussian", "calibrate-gaussian", "subsample", "shuffle", "group", "convert"]


def test_the_readme_is_at_most_200_lines():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


def test_the_readme_keeps_the_ten_line_audit_as_the_guide_shows_it():
    readme = [b.text for b in blocks(ROOT / "README.md") if b.lang == "python"]
    guide = [b.text for b in blocks(ROOT / "docs" / "guides" / "two-dataset.md") if b.lang == "python"]
    assert readme and guide and readme[0] == guide[0]
    snippet = readme[0]
    assert 'null_record=0.0' in snippet and "trials=200_000, seed=0" in snippet and "# 0.9886 consistent" in snippet


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_command_hides_in_a_block_that_is_not_run(page: Path):
    for block in blocks(page):
        if block.lang == "" and not is_console(block):  # `text` says: a synopsis or an output, not commands
            hidden = [line for line in block.text.splitlines() if COMMAND_LIKE.match(line)]
            assert not hidden, f"{block.where}: label the block `sh` (or `console` with `$ `, or `text`): {hidden}"


PATH_LIKE = re.compile(r"`([A-Za-z0-9_.][A-Za-z0-9_./-]*/[A-Za-z0-9_./-]*)`")
TOP = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")} | {".ci"}


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_path_a_page_names_exists(page: Path):
    """A path in backquotes whose first folder is one of the repository's must exist (placeholders like DIR/ aside)."""
    text = page.read_text(encoding="utf-8")
    missing = []
    for path in PATH_LIKE.findall(text):
        first = path.split("/", 1)[0]
        if first in TOP and first not in ("site", "figures") and not (ROOT / path.rstrip("/")).exists():
            missing.append(path)
    assert not missing, f"{page.relative_to(ROOT)} names paths that do not exist: {missing}"


def _flags(*argv: str) -> set[str]:
    shown = subprocess.run([sys.executable, "-m", "dpaudit.audit.cli", *argv, "--help"], capture_output=True, text=True,
                           check=True, env={"COLUMNS": "200", "PATH": ""}).stdout
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", shown)) - {"--help"}


def test_the_cli_reference_names_every_flag_of_every_subcommand():
    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = {}
    for argv in [[name] for name in SUBCOMMANDS] + [["bounds", kind] for kind in BOUNDS]:
        section = reference
        absent = sorted(flag for flag in _flags(*argv) if f"`{flag}" not in section and f"{flag} " not in section)
        if absent:
            missing[" ".join(argv)] = absent
    assert not missing, f"docs/cli.md does not name these flags: {missing}"
    for name in SUBCOMMANDS + ["bounds"]:
        assert f"## `dpaudit {name}" in reference or f"`dpaudit {name}`" in reference, name


def _inventory(site: Path) -> set[str]:
    """Return the object names of the site's objects.inv (Sphinx inventory version 2)."""
    raw = (site / "objects.inv").read_bytes()
    body = raw.split(b"\n", 4)[4]
    return {line.split(" ", 1)[0] for line in zlib.decompress(body).decode().splitlines() if line}


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                           capture_output=True, text=True, env={"NO_MKDOCS_2_WARNING": "1", "PATH": ""}, timeout=900)
    assert built.returncode == 0, built.stderr[-4000:]
    return site


def test_the_site_builds_strictly_and_its_api_reference_lists_every_public_name(built_site: Path):
    import dpaudit.audit
    import dpaudit.mechanisms
    import dpaudit.testing

    names = _inventory(built_site)
    absent = [f"dpaudit.audit.{n}" for n in dpaudit.audit.__all__ if f"{dpaudit.audit._HOMES[n]}.{n}" not in names]
    absent += [f"dpaudit.testing.{n}" for n in dpaudit.testing.__all__ if f"dpaudit.testing.{n}" not in names]
    absent += [f"dpaudit.mechanisms.{n}" for n in dpaudit.mechanisms.__all__
               if f"dpaudit.mechanisms.{n}" not in names and f"dpaudit.mechanisms.{n}.{n}" not in names]
    assert not absent, f"the API reference lacks {absent}"
    notebook = (built_site / "notebooks" / "audit_walkthrough" / "index.html").read_text(encoding="utf-8")
    assert "jp-OutputArea-output" in notebook and "consistent" in notebook  # the page shows the notebook as it ran
    assert (built_site / "libraries" / "index.html").exists()


def test_every_link_of_the_readme_leads_to_a_file_of_the_repository():
    """mkdocs checks the site's links (--strict); the README is outside the site, so its links are checked here."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = {link.split("#", 1)[0] for link in re.findall(r"\]\(([^)\s]+)\)", readme) if "://" not in link}
    assert targets and not [t for t in sorted(targets) if t and not (ROOT / t).exists()]


def test_every_count_a_page_states_about_the_registry_is_the_registrys():
    import facts

    assert facts.stale() == [], "run `python tests/docs/facts.py --write`"
    shown = "<!-- fact: builtins+buggy -->3<!-- /fact -->"
    match = facts.FACT.search(shown)
    assert facts.value(match["name"], {"builtins": 2, "buggy": 1, "opendp": 7}) == 3
