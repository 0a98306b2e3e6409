"""Listing and the suite build no library environment: a mechanism that needs one is ready only once it is built."""

import json

from dpaudit.audit.audits.suite import select
from dpaudit.audit.cli import main
from dpaudit.mechanisms.registry import Registration, list_mechanisms, registration


def test_without_built_environments_list_names_them_and_the_suite_leaves_them_out(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path))
    needing = [n for n in list_mechanisms() if registration(n).environment is not None]
    assert needing and not any(registration(n).ready() for n in needing)
    assert main(["list", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert all(rows[n]["epsilon"] is None and "dpaudit env create" in rows[n]["description"] for n in needing)
    assert not list(tmp_path.iterdir()), "listing built an environment"
    assert not {name for name, _ in select("quick")} & set(needing)



def test_the_whole_suite_leaves_out_built_environments_and_only_takes_them_in(monkeypatch):
    """`make demo` takes the same minutes whichever environments exist: a built one joins only a suite that names it."""
    monkeypatch.setattr(Registration, "ready", lambda self: True)  # as if every environment were built
    needing = [n for n in list_mechanisms() if registration(n).environment is not None]
    assert needing and not {name for name, _ in select("quick")} & set(needing)
    for name in needing:
        assert [entry for entry, _ in select("quick", only=name)] == [name]
