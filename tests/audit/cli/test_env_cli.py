"""`dpaudit env list|create|remove NAME`: what each prints and its exit status (a fake installer: no network)."""

import json

import pytest
from dpaudit.audit.cli import main
from dpaudit.mechanisms import environments as envs
from dpaudit.mechanisms.environments import Environment
from dpaudit.mechanisms.registry import list_mechanisms

TINY = Environment(name="tiny-cli", packages=("numpy==2.2.6",), description="a test's")


@pytest.fixture
def cache(monkeypatch, tmp_path):
    """`TINY` declared, a cache folder of the test's own, and an installer that writes an empty bin/python."""
    list_mechanisms()  # every declaring module imported before the registry is patched
    monkeypatch.setitem(envs.ENVIRONMENTS, TINY.name, TINY)
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path))

    def install(environment, folder):
        (folder / "bin").mkdir(parents=True)
        (folder / "bin" / "python").write_text("")
        return "fake"

    monkeypatch.setattr(envs, "_install", install)
    return tmp_path / "environments"


def listed(capsys) -> dict:
    assert main(["env", "list", "--json"]) == 0
    return {row["name"]: row for row in json.loads(capsys.readouterr().out)}


def test_create_list_remove_and_their_exit_statuses(cache, capsys):
    rows = listed(capsys)
    assert "numpy-only" in rows and rows[TINY.name]["built"] is False
    assert rows[TINY.name]["packages"] == ["numpy==2.2.6"] and rows[TINY.name]["path"] == str(envs.environment_dir(TINY.name))
    assert main(["env", "create", TINY.name]) == 0
    assert capsys.readouterr().out.strip().endswith(str(envs.environment_dir(TINY.name) / "bin" / "python"))
    assert listed(capsys)[TINY.name]["built"] is True
    assert main(["env", "create", TINY.name]) == 0 and "built already" in capsys.readouterr().out
    assert main(["env", "list"]) == 0 and TINY.name in capsys.readouterr().out
    assert main(["env", "remove", TINY.name]) == 0 and "is removed" in capsys.readouterr().out
    assert main(["env", "remove", TINY.name]) == 0 and "was not built" in capsys.readouterr().out
    assert listed(capsys)[TINY.name]["built"] is False


@pytest.mark.parametrize("argv", [["env"], ["env", "create"], ["env", "remove"], ["env", "build", "x"]])
def test_a_missing_or_unknown_action_or_name_exits_2(argv, cache, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2


@pytest.mark.parametrize("action", ["create", "remove"])
def test_an_undeclared_environment_is_one_sentence_exit_2(action, cache, capsys):
    assert main(["env", action, "nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpaudit: error: There is no environment named 'nope'; the declared ones are: ") and "\n" not in err


def test_a_failed_build_is_one_sentence_exit_2_and_leaves_nothing(cache, capsys, monkeypatch):
    def fail(environment, folder):
        folder.mkdir(parents=True)
        raise envs.EnvironmentBuildError(f"The environment '{environment.name}' could not be built: installing its packages failed (x).")

    monkeypatch.setattr(envs, "_install", fail)
    assert main(["env", "create", TINY.name]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"dpaudit: error: The environment '{TINY.name}' could not be built: installing its packages failed (x)."
    assert [p.name for p in cache.iterdir() if p.is_dir()] == []


def test_a_missing_system_need_is_named_in_one_sentence(cache, capsys, monkeypatch):
    monkeypatch.setitem(envs.NEEDS, "java", (lambda: False, "a Java runtime (apt-get install -y default-jre-headless)"))
    monkeypatch.setitem(envs.ENVIRONMENTS, "needs-java", Environment(name="needs-java", packages=("x",), needs=("java",)))
    assert main(["env", "create", "needs-java"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "dpaudit: error: The environment 'needs-java' needs a Java runtime (apt-get install -y default-jre-headless), "
        "which this machine lacks.")
