"""Library environments: a declared set of pinned packages, built once into a virtual environment of its own.

A library that cannot share dpaudit's environment (diffprivlib 0.6.6 wants
scikit-learn < 1.6, Tumult pins numpy 1.26 and brings Spark) or one audited
at several versions side by side gets an `Environment`: its pip requirements,
its Python version, a one-line check that it works, and what it needs from
the system (Java for Tumult). Adapter modules `declare` theirs at import;
`environment_python(NAME)` returns the environment's interpreter, building it
on first use, and the adapters run the library there through the external
process protocol (`external_python`, a side module under mechanisms/scripts/).

Building uses `uv` (the `libraries` extra installs it): `uv venv --python X
DIR`, then `uv pip install --python DIR/bin/python PACKAGES`; where uv is
missing, `python X -m venv DIR` and pip. The environment lives under
$DPAUDIT_CACHE_DIR/environments/, else the user's cache directory
($XDG_CACHE_HOME or ~/.cache, then dpaudit/environments/), in a folder
`NAME-HASH` whose hash is of the packages and the Python version, so a
changed declaration builds anew and the old folder is never used again.

A build is all or nothing: it runs in a hidden folder beside the final one
and is renamed into place (atomically) only after its check passed, under a
lock file, so two processes asking for one environment build it once, a
build that failed or was interrupted leaves nothing behind, and an
environment that exists is a complete one. A failure is one sentence
(`EnvironmentBuildError`): the environment, the step, the installer's last
line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterator

from dpaudit.errors import InvalidParameterError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; the atomic rename alone keeps a build whole
    fcntl = None

__all__ = [
    "ENVIRONMENTS",
    "NEEDS",
    "Environment",
    "EnvironmentBuildError",
    "cache_root",
    "declare",
    "environment_dir",
    "environment_exists",
    "environment_python",
    "missing_needs",
    "remove_environment",
]

MANIFEST = "dpaudit-environment.json"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
HASH_LENGTH = 10


class EnvironmentBuildError(InvalidParameterError):
    """An environment could not be built: one sentence naming it, the step that failed and the installer's last line."""


@dataclasses.dataclass(frozen=True)
class Environment:
    """A declared environment: what to install, for which Python, and how to tell it works.

    Attributes:
        name: its name, e.g. "diffprivlib-0.6.6" (letters, digits, `.`, `_`, `+`, `-`).
        packages: pip requirement strings with their pins, e.g. ("diffprivlib==0.6.6", "scikit-learn<1.6").
        python: the Python version, "3.11" (uv fetches it where it is not installed; venv needs it installed).
        description: one line for `dpaudit env list`.
        check: a one-line Python statement run in the environment after the install (e.g. "import diffprivlib");
            the build fails if it fails. Empty: no check.
        needs: what the system must provide, names of `NEEDS` (e.g. ("java",)); checked before a build.
    """

    name: str
    packages: tuple[str, ...]
    python: str = "3.11"
    description: str = ""
    check: str = ""
    needs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise InvalidParameterError(f"An environment's name must be letters, digits, '.', '_', '+' or '-'; got {name!r} instead.")
        for field in ("packages", "needs"):
            value = getattr(self, field)
            if isinstance(value, str) or not all(isinstance(p, str) and p.strip() for p in value):
                raise InvalidParameterError(f"The '{field}' of environment '{name}' must be a tuple of strings; got {value!r} instead.")
            object.__setattr__(self, field, tuple(value))
        if not self.packages:
            raise InvalidParameterError(f"The environment '{name}' must declare at least one package.")
        if not re.fullmatch(r"3\.\d+", str(self.python)):
            raise InvalidParameterError(f"The 'python' of environment '{name}' must be a version such as '3.11'; got {self.python!r}.")
        unknown = [n for n in self.needs if n not in NEEDS]
        if unknown:
            raise InvalidParameterError(f"The environment '{name}' needs {unknown[0]!r}, not one of {', '.join(NEEDS)}.")

    @property
    def digest(self) -> str:
        """Return the short hash of what the environment holds: its packages and its Python version."""
        text = json.dumps({"packages": list(self.packages), "python": self.python}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:HASH_LENGTH]


def _runs(*argv: str) -> bool:
    """Return whether the program `argv` runs and exits 0 (within 60 s)."""
    try:
        return subprocess.run(argv, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


NEEDS: dict[str, tuple[Callable[[], bool], str]] = {
    "java": (lambda: _runs("java", "-version"),
             "a Java runtime (`java` on the PATH; on Debian or Ubuntu: apt-get install -y default-jre-headless)"),
}
"""A system need → (whether this machine has it, what to install when it does not)."""

ENVIRONMENTS: dict[str, Environment] = {}
"""Every declared environment by name (adapter modules declare theirs at import)."""


def declare(environment: Environment) -> Environment:
    """Add `environment` to `ENVIRONMENTS` and return it; declaring the same one again changes nothing.

    Raises ValueError when another environment of that name is declared already (a programming error).
    """
    known = ENVIRONMENTS.setdefault(environment.name, environment)
    if known != environment:
        raise ValueError(f"Another environment named '{environment.name}' is declared already.")
    return environment


def _declared(name: str) -> Environment:
    """Return the environment declared as `name`, or raise InvalidParameterError naming the declared ones."""
    try:
        return ENVIRONMENTS[name]
    except KeyError:
        known = ", ".join(sorted(ENVIRONMENTS)) or "none"
        raise InvalidParameterError(f"There is no environment named '{name}'; the declared ones are: {known}.") from None


def cache_root() -> Path:
    """Return the folder of every environment: $DPAUDIT_CACHE_DIR/environments, else the user's cache's dpaudit/environments."""
    given = os.environ.get("DPAUDIT_CACHE_DIR")
    if given:
        return Path(given).expanduser() / "environments"
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "dpaudit" / "environments"


def environment_dir(name: str) -> Path:
    """Return the folder of the declared environment `name` (`NAME-HASH` under `cache_root()`), built or not."""
    environment = _declared(name)
    return cache_root() / f"{environment.name}-{environment.digest}"


def _interpreter(folder: Path) -> Path:
    """Return the interpreter of the virtual environment in `folder`."""
    return folder / "Scripts" / "python.exe" if sys.platform == "win32" else folder / "bin" / "python"


def environment_exists(name: str) -> bool:
    """Return whether the declared environment `name` is built (its folder is only ever complete)."""
    return _interpreter(environment_dir(name)).is_file()


def missing_needs(name: str) -> list[str]:
    """Return what the environment `name` needs from the system and this machine lacks: a description of each."""
    return [NEEDS[need][1] for need in _declared(name).needs if not NEEDS[need][0]()]


def environment_python(name: str, *, create: bool = True) -> Path:
    """Return the interpreter of the declared environment `name`, building it first when it is not built.

    With `create=False` an environment that is not built raises InvalidParameterError instead.
    A build that fails raises EnvironmentBuildError and leaves nothing behind.
    """
    folder = environment_dir(name)
    python = _interpreter(folder)
    if python.is_file():
        return python
    if not create:
        raise InvalidParameterError(f"The environment '{name}' is not built; run `dpaudit env create {name}`.")
    _build(ENVIRONMENTS[name], folder)
    return python


def remove_environment(name: str) -> bool:
    """Remove every build of the declared environment `name` (this declaration's and older ones); return whether one existed."""
    environment = _declared(name)
    root = cache_root()
    if not root.is_dir():
        return False
    own = re.compile(re.escape(environment.name) + r"-[0-9a-f]{%d}" % HASH_LENGTH)
    removed = False
    with _locked(root / f".{environment_dir(name).name}.lock"):
        for folder in root.iterdir():
            if folder.is_dir() and own.fullmatch(folder.name):
                shutil.rmtree(folder)
                removed = True
    return removed


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (created if absent) for the block; no lock where fcntl is missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _build(environment: Environment, folder: Path) -> None:
    """Build `environment` into `folder`: in a hidden folder beside it, renamed into place once its check passed.

    Under a lock, so a second process waits and finds it built; a failed or interrupted build is removed.
    """
    lacking = missing_needs(environment.name)
    if lacking:
        raise EnvironmentBuildError(f"The environment '{environment.name}' needs {lacking[0]}, which this machine lacks.")
    with _locked(folder.parent / f".{folder.name}.lock"):
        if _interpreter(folder).is_file():
            return  # another process built it while this one waited
        for stale in folder.parent.glob(f".{folder.name}.building-*"):
            shutil.rmtree(stale, ignore_errors=True)  # left by a process killed mid-build (the lock is free)
        temporary = folder.parent / f".{folder.name}.building-{os.getpid()}"
        try:
            installer = _install(environment, temporary)
            if environment.check:
                _step(environment, "its check", [str(_interpreter(temporary)), "-c", environment.check])
            manifest = {**dataclasses.asdict(environment), "digest": environment.digest, "installer": installer}
            (temporary / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
            _publish(temporary, folder)
        finally:
            shutil.rmtree(temporary, ignore_errors=True)


def _publish(temporary: Path, folder: Path) -> None:
    """Rename the finished build `temporary` to `folder`; when `folder` appeared meanwhile (no lock), keep that one."""
    try:
        os.rename(temporary, folder)
    except OSError:
        if not _interpreter(folder).is_file():
            raise


def uv_executable() -> str | None:
    """Return the `uv` program: the one the `uv` package installed beside dpaudit, else one on the PATH, else None."""
    try:
        import uv

        return uv.find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def _install(environment: Environment, folder: Path) -> str:
    """Create the virtual environment `folder` and install the packages of `environment` in it; return the installer used."""
    uv = uv_executable()
    python = str(_interpreter(folder))
    installed = installed_python(environment.python)
    creating = f"creating its Python {environment.python} environment"
    if uv is not None:  # an installed interpreter of that version first, else uv finds or fetches one
        fetched = "" if installed else f"no Python {environment.python} is installed here, so uv fetches one"
        _step(environment, creating, [uv, "venv", "--quiet", "--python", installed or environment.python, str(folder)], context=fetched)
        _step(environment, "installing its packages", [uv, "pip", "install", "--python", python, *environment.packages])
        return "uv"
    if installed is None:
        raise EnvironmentBuildError(
            f"The environment '{environment.name}' needs Python {environment.python}, which is not installed here, "
            "and uv, which would fetch it, is not either (pip install 'dpaudit[libraries]')."
        )
    _step(environment, creating, [installed, "-m", "venv", str(folder)])
    _step(environment, "installing its packages",
          [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *environment.packages])
    return "pip"


def installed_python(version: str) -> str | None:
    """Return the path of an installed interpreter of Python `version` ("3.11"), or None.

    This one when it is that version; else `python<version>` on the PATH, or in pyenv's versions (which its
    shims run only when selected), resolved to the interpreter it runs, when it reports that version.
    """
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return sys.executable
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates = [shutil.which(f"python{version}"), *sorted(map(str, pyenv.glob(f"{version}.*/bin/python{version}")), reverse=True)]
    return next((found for found in map(_reports, candidates, [version] * len(candidates)) if found), None)


def _reports(program: str | None, version: str) -> str | None:
    """Return the interpreter that `program` runs when it runs Python `version`, else None."""
    if program is None:
        return None
    probe = "import sys; print('%d.%d' % sys.version_info[:2]); print(sys.executable)"
    try:
        done = subprocess.run([program, "-c", probe], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.splitlines()
    return lines[1] if done.returncode == 0 and len(lines) == 2 and lines[0] == version else None


def _step(environment: Environment, step: str, argv: list[str], *, context: str = "") -> None:
    """Run one step of a build; raise EnvironmentBuildError with the step and the program's last line when it fails.

    `context`, when given, comes before that line (what the step was doing that the line may not say).
    """
    try:
        done = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              env={**os.environ, "NO_COLOR": "1", "COLUMNS": "1000"})  # uv's messages unwrapped
    except OSError as exc:
        raise EnvironmentBuildError(f"The environment '{environment.name}' could not be built: {step} failed ({exc}).") from None
    if done.returncode != 0:
        raise EnvironmentBuildError(
            f"The environment '{environment.name}' could not be built: {step} failed "
            f"({context + ': ' if context else ''}{_last_line(done.stderr + done.stdout)})."
        )


def _last_line(output: str) -> str:
    """Return the installer's last message: from its last line that opens one ('error:', 'cause:', ...) to the end, on one line.

    Without such a line (a Python traceback), the last line; 'hint:' lines, the opening word and a final full stop left out.
    """
    lines = [line.strip() for line in output.splitlines() if line.strip() and not line.strip().startswith("hint:")]
    if not lines:
        return "no message"
    opening = re.compile(r"^(error|cause|caused by|ERROR)\s*:\s*|^╰─▶\s*", re.IGNORECASE)
    starts = [i for i, line in enumerate(lines) if opening.match(line)]
    message = " ".join(lines[starts[-1]:] if starts else lines[-1:])
    return opening.sub("", message).rstrip(".")


declare(Environment(
    name="numpy-only",
    packages=("numpy==2.2.6",),
    python=f"{sys.version_info.major}.{sys.version_info.minor}",
    description="numpy alone, on dpaudit's own Python: the smallest environment (dpaudit's tests build it; try the machinery)",
    check="import numpy",
))
