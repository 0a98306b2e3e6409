"""Ship the user's own modules to the workers of an existing Dask cluster, which cannot import them otherwise.

A mechanism named `noisy_count:mech` on the command line lives in a file
of the user's folder (the current directory, or a folder of `PYTHONPATH`).
Pickles name a module's functions and classes by reference, so a worker of
a cluster started elsewhere fails to load the audit's task ("deserialization
of the task graph"). Before the task is sent, `ship_user_modules` finds the
modules the task refers to (a dry run of cloudpickle, which records every
function, class and module it meets), keeps those whose file lies in the
user's folders, and uploads each with `Client.upload_file`: a plain module
as its .py file, a package (its top-level package) as a zip of its folder.
The workers then import them as this process does. A module that the
user's code imports only when it runs, from a flat file beside it, is not
seen in the task and not shipped: make it part of a package, or install
it on the workers. Modules of dpaudit, of the standard library and of
installed packages are never shipped: the workers need dpaudit and the
libraries installed (the scale guide says so).
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import types
import zipfile
from pathlib import Path
from typing import Any, Iterable

__all__ = ["ship_user_modules", "user_folders", "user_modules"]

OWN = "dpaudit"


def user_folders() -> list[Path]:
    """Return the folders a user's own modules are imported from: the current directory and those of PYTHONPATH."""
    given = [os.getcwd(), *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    return [Path(folder).resolve() for folder in given if folder]


def referenced_modules(task: Any) -> set[str]:
    """Return the names of the modules whose functions, classes or module objects pickling `task` refers to."""
    import cloudpickle

    seen: set[str] = set()

    class Recorder(cloudpickle.CloudPickler):
        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, types.ModuleType):
                seen.add(obj.__name__)
            elif isinstance(obj, (types.FunctionType, type)):
                seen.add(getattr(obj, "__module__", None) or "")
            return super().reducer_override(obj)

    Recorder(io.BytesIO()).dump(task)
    return seen - {""}


def user_modules(names: Iterable[str], folders: list[Path]) -> dict[str, Path]:
    """Return top-level module name → what to upload (its .py file, or its package folder) for the modules of
    `names` whose file lies in one of `folders`, dpaudit's own and `__main__` excepted."""
    found: dict[str, Path] = {}
    for name in names:
        top = name.partition(".")[0]
        module = sys.modules.get(top)
        if top in (OWN, "__main__") or module is None or getattr(module, "__file__", None) is None:
            continue
        path = Path(module.__file__).resolve()
        shipped = path.parent if hasattr(module, "__path__") else path
        if path.suffix == ".py" and any(shipped.parent == folder for folder in folders):
            found[top] = shipped
    return found


def _zipped(package: Path, into: Path) -> Path:
    """Return a zip of the package folder `package` (its .py files, under its own name), written in `into`."""
    archive = into / f"{package.name}.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for file in sorted(package.rglob("*.py")):
            zipped.write(file, file.relative_to(package.parent))
    return archive


def ship_user_modules(client: Any, task: Any) -> list[str]:
    """Upload to every worker of `client` the user's modules that `task` refers to; return their names.

    Sound to call for any task: it changes where the workers import those
    modules from, never what the task computes (the files are this
    process's own).
    """
    shipped = user_modules(referenced_modules(task), user_folders())
    with tempfile.TemporaryDirectory(prefix="dpaudit-ship-") as folder:
        for name, path in sorted(shipped.items()):
            client.upload_file(str(_zipped(path, Path(folder)) if path.is_dir() else path), load=True)
    return sorted(shipped)
