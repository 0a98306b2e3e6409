"""Library environments (dpaudit.mechanisms.environments): declarations, their folders, builds all or nothing, removal.

One test builds the smallest declared environment, numpy-only, from scratch with uv into a fresh cache
folder (a few seconds; it needs PyPI, as installing dpaudit does) and audits a correct and a buggy Laplace
run there through the external protocol. The others replace the installer by a fake one, so they test the
folders, the lock and the clean-up without a network.
"""

import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from dpaudit.audit import audit_mechanism
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms import environments as envs
from dpaudit.mechanisms.environments import Environment, EnvironmentBuildError
from dpaudit.mechanisms.external.processes import external_python
from dpaudit.mechanisms.registry import list_mechanisms

TINY = Environment(name="tiny", packages=("numpy==2.2.6",), python="3.11", description="a test's", check="import numpy")

SIDE = textwrap.dedent(
    """
    import numpy as np

    def laplace_sum(data, size, seed):
        return float(np.sum(data)) + np.random.default_rng(seed).laplace(0.0, 1.0, size)

    def laplace_sum_half_noise(data, size, seed):  # BUGGY: scale 1/2 where ε = 1 needs 1, so it is 2-DP only
        return float(np.sum(data)) + np.random.default_rng(seed).laplace(0.0, 0.5, size)
    """
)


@pytest.fixture
def registry(monkeypatch, tmp_path):
    """A registry holding numpy-only and `TINY`, a cache folder of the test's own.

    Every module that declares an environment is imported first, so none declares its own into this registry.
    """
    list_mechanisms()
    monkeypatch.setattr(envs, "ENVIRONMENTS", {"numpy-only": envs.ENVIRONMENTS["numpy-only"]})
    envs.declare(TINY)
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    return envs.ENVIRONMENTS


def fake_install(calls: list, pause: float = 0.0):
    """Return an installer that makes a folder with an empty bin/python (no network), counting its calls."""

    def install(environment, folder):
        calls.append(folder)
        time.sleep(pause)
        (folder / "bin").mkdir(parents=True)
        (folder / "bin" / "python").write_text("")
        return "fake"

    return install


def built_folders(root: Path) -> list[str]:
    """Return the names of the folders under the cache's environments/ (hidden build folders included)."""
    folder = root / "environments"
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def test_declarations_are_checked_and_a_second_one_of_a_name_is_refused(registry):
    assert envs.declare(TINY) is TINY  # the same declaration again changes nothing
    with pytest.raises(ValueError, match="'tiny' is declared already"):
        envs.declare(Environment(name="tiny", packages=("numpy==2.2.5",)))
    for bad, match in [({"name": "a b"}, "name"), ({"packages": ()}, "at least one package"),
                       ({"packages": "numpy"}, "tuple of strings"), ({"python": "3"}, "version such as"),
                       ({"needs": ("cobol",)}, "needs 'cobol', not one of java")]:
        with pytest.raises(InvalidParameterError, match=match):
            Environment(**{"name": "x", "packages": ("numpy",), **bad})
    assert Environment(name="x", packages=["numpy"]).packages == ("numpy",)  # a list is kept as a tuple
    with pytest.raises(InvalidParameterError, match="no environment named 'nope'; the declared ones are: numpy-only, tiny"):
        envs.environment_python("nope")


def test_the_folder_is_under_the_cache_and_named_by_the_hash_of_packages_and_python(registry, monkeypatch, tmp_path):
    assert envs.environment_dir("tiny") == tmp_path / "cache" / "environments" / f"tiny-{TINY.digest}"
    monkeypatch.delenv("DPAUDIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert envs.cache_root() == tmp_path / "xdg" / "dpaudit" / "environments"
    other_pin = Environment(name="tiny", packages=("numpy==2.2.5",))
    other_python = Environment(name="tiny", packages=TINY.packages, python="3.12")
    described = Environment(name="tiny", packages=TINY.packages, description="another line", check="pass")
    assert len({TINY.digest, other_pin.digest, other_python.digest}) == 3
    assert described.digest == TINY.digest and len(TINY.digest) == envs.HASH_LENGTH


def test_a_build_is_published_whole_then_reused(registry, monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(envs, "_install", fake_install(calls))
    monkeypatch.setitem(envs.ENVIRONMENTS, "tiny", Environment(name="tiny", packages=TINY.packages, check=""))
    assert not envs.environment_exists("tiny")
    with pytest.raises(InvalidParameterError, match="'tiny' is not built; run `dpaudit env create tiny`"):
        envs.environment_python("tiny", create=False)
    python = envs.environment_python("tiny")
    assert python == envs.environment_dir("tiny") / "bin" / "python" and envs.environment_exists("tiny")
    assert calls[0].name.startswith(f".tiny-{TINY.digest}.building-")  # built beside, then renamed
    manifest = json.loads((envs.environment_dir("tiny") / envs.MANIFEST).read_text())
    assert manifest["packages"] == list(TINY.packages) and manifest["installer"] == "fake"
    assert envs.environment_python("tiny") == python and len(calls) == 1
    assert built_folders(tmp_path / "cache") == [f"tiny-{TINY.digest}"]


def test_two_builds_at_once_build_once(registry, monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(envs, "_install", fake_install(calls, pause=0.5))
    monkeypatch.setitem(envs.ENVIRONMENTS, "tiny", Environment(name="tiny", packages=TINY.packages))
    found = []
    threads = [threading.Thread(target=lambda: found.append(envs.environment_python("tiny"))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and found[0] == found[1] and found[0].is_file()  # the second waited on the lock
    assert built_folders(tmp_path / "cache") == [f"tiny-{TINY.digest}"]


def test_a_failed_or_interrupted_build_leaves_nothing(registry, monkeypatch, tmp_path):
    def interrupted(environment, folder):
        (folder / "bin").mkdir(parents=True)
        raise KeyboardInterrupt

    monkeypatch.setattr(envs, "_install", interrupted)
    with pytest.raises(KeyboardInterrupt):
        envs.environment_python("tiny")
    assert built_folders(tmp_path / "cache") == []
    stale = tmp_path / "cache" / "environments" / f".tiny-{TINY.digest}.building-1"
    stale.mkdir()  # as a process killed mid-build leaves it
    monkeypatch.setattr(envs, "_install", fake_install([]))
    monkeypatch.setitem(envs.ENVIRONMENTS, "tiny", Environment(name="tiny", packages=TINY.packages))
    envs.environment_python("tiny")
    assert built_folders(tmp_path / "cache") == [f"tiny-{TINY.digest}"]


def test_a_missing_system_need_is_one_sentence_before_anything_is_built(registry, monkeypatch, tmp_path):
    monkeypatch.setitem(envs.NEEDS, "java", (lambda: False, "a Java runtime (install one)"))
    envs.declare(Environment(name="spark", packages=("pyspark",), needs=("java",)))
    monkeypatch.setattr(envs, "_install", lambda *a: pytest.fail("nothing is installed when a need is missing"))
    assert envs.missing_needs("spark") == ["a Java runtime (install one)"]
    with pytest.raises(EnvironmentBuildError, match=r"^The environment 'spark' needs a Java runtime \(install one\), which this machine"):
        envs.environment_python("spark")
    assert built_folders(tmp_path / "cache") == []


def test_remove_deletes_every_build_of_that_name_only(registry, monkeypatch, tmp_path):
    monkeypatch.setattr(envs, "_install", fake_install([]))
    monkeypatch.setitem(envs.ENVIRONMENTS, "tiny", Environment(name="tiny", packages=TINY.packages))
    envs.environment_python("tiny")
    root = tmp_path / "cache" / "environments"
    for kept in ("tiny-2-0123456789", "tinyx-0123456789"):  # other names beginning with tiny
        (root / kept).mkdir()
    (root / "tiny-abcdef0123").mkdir()  # an older declaration's build
    assert envs.remove_environment("tiny") is True
    assert built_folders(tmp_path / "cache") == ["tiny-2-0123456789", "tinyx-0123456789"]
    assert envs.remove_environment("tiny") is False and not envs.environment_exists("tiny")


def test_an_installer_failure_is_one_sentence_with_its_last_line_and_leaves_nothing(registry, monkeypatch, tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import sys\nsys.stderr.write('resolving\\nerror: no version of numpy==99.1\\nhint: try another\\n')\nsys.exit(1)\n")
    monkeypatch.setattr(envs, "_install", lambda environment, folder: envs._step(
        environment, "installing its packages", [sys.executable, str(script)]))
    with pytest.raises(EnvironmentBuildError) as exc:
        envs.environment_python("tiny")
    assert str(exc.value) == "The environment 'tiny' could not be built: installing its packages failed (no version of numpy==99.1)."
    assert built_folders(tmp_path / "cache") == []


@pytest.fixture(scope="module")
def numpy_only(tmp_path_factory):
    """The numpy-only environment, built from scratch with uv into a cache folder of this module's own."""
    if envs.uv_executable() is None:
        pytest.fail("uv is not installed: install dpaudit's test extra (pip install -e '.[test]').")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        start = time.monotonic()
        python = envs.environment_python("numpy-only")
        seconds = time.monotonic() - start
        yield python, seconds, envs.environment_dir("numpy-only")


def test_numpy_only_builds_from_scratch_with_uv_and_a_correct_laplace_holds_there_a_buggy_one_not(numpy_only, tmp_path):
    python, seconds, folder = numpy_only
    assert python.is_file() and folder.parent.parent != Path.home() / ".cache" / "dpaudit"
    assert json.loads((folder / envs.MANIFEST).read_text())["installer"] == "uv"
    assert seconds < 60, f"the smallest environment took {seconds:.0f} s to build"
    (tmp_path / "side.py").write_text(SIDE)
    with external_python(str(python), "side:laplace_sum", epsilon=1.0, path=[tmp_path]) as correct:
        held = audit_mechanism(correct, trials=20_000, seed=0)
    with external_python(str(python), "side:laplace_sum_half_noise", epsilon=1.0, path=[tmp_path]) as buggy:
        flagged = audit_mechanism(buggy, trials=20_000, seed=0)
    assert held.verdict == "consistent" and held.lower_bound.epsilon <= 1.0
    assert flagged.verdict == "violation" and flagged.lower_bound.epsilon > 1.0


def test_the_side_environment_has_its_pin_and_not_dpaudit(numpy_only):
    python, _, _ = numpy_only
    probe = "import importlib.util, numpy; print(numpy.__version__, importlib.util.find_spec('dpaudit') is None)"
    assert subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True).stdout.split() == ["2.2.6", "True"]


@pytest.mark.libraries
def test_without_uv_venv_and_pip_build_it_and_a_failed_pin_leaves_nothing(registry, monkeypatch, tmp_path):
    monkeypatch.setattr(envs, "uv_executable", lambda: None)
    python = envs.environment_python("numpy-only")
    assert json.loads((envs.environment_dir("numpy-only") / envs.MANIFEST).read_text())["installer"] == "pip"
    assert subprocess.run([str(python), "-c", "import numpy; print(numpy.__version__)"], capture_output=True, text=True).stdout == "2.2.6\n"
    monkeypatch.setitem(envs.ENVIRONMENTS, "tiny", Environment(name="tiny", packages=("numpy==99.1",), python=TINY.python))
    with pytest.raises(EnvironmentBuildError, match=r"^The environment 'tiny' could not be built: installing its packages failed \(.*99.1"):
        envs.environment_python("tiny")
    assert built_folders(tmp_path / "cache") == [envs.environment_dir("numpy-only").name]


def test_with_uv_a_pin_that_does_not_exist_is_one_sentence_and_leaves_nothing(registry, monkeypatch, tmp_path):
    monkeypatch.setitem(envs.ENVIRONMENTS, "tiny", Environment(name="tiny", packages=("numpy==99.1",), python=TINY.python))
    with pytest.raises(EnvironmentBuildError) as exc:
        envs.environment_python("tiny")
    assert str(exc.value).startswith("The environment 'tiny' could not be built: installing its packages failed (")
    assert "numpy==99.1" in str(exc.value) and "\n" not in str(exc.value)
    assert built_folders(tmp_path / "cache") == []


def test_an_installed_python_is_found_by_its_version_and_an_absent_one_is_none():
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert envs.installed_python(here) == sys.executable
    assert envs.installed_python("3.99") is None
