"""A results folder that keeps every finished training run, so an interrupted audit resumes losing nothing.

`setup.json` records what the runs are (settings and seed, and under
"fingerprint" a digest of everything that determines them: target, code,
data, configuration, claim, canaries, dataset, game and seed;
`dpaudit.execution.fingerprint`); `runs.jsonl` gets one line per
finished run, written and flushed to disk as the run ends. A resume whose
setup differs is refused before anything is written, so a folder never
mixes the runs of two audits. A line cut short by a hard kill is dropped on
reopening, and that run is played again from its own seed, so a resumed
audit ends with exactly the records an uninterrupted one would have.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

from dpaudit.errors import InvalidParameterError
from dpaudit.json_values import jsonable

__all__ = ["RunStore"]

SETUP, RUNS, FINGERPRINT = "setup.json", "runs.jsonl", "fingerprint"


class RunStore:
    """The folder `path` holding the runs of one audit described by `setup` (a JSON-ready mapping)."""

    def __init__(self, path: str | Path, setup: Mapping[str, Any], *, resume: bool) -> None:
        self.path = Path(path)
        self.setup = json.loads(json.dumps(jsonable(dict(setup))))
        self._open(resume)

    def _open(self, resume: bool) -> None:
        runs = self.path / RUNS
        if not runs.exists():
            self.path.mkdir(parents=True, exist_ok=True)
            (self.path / SETUP).write_text(json.dumps(self.setup, indent=2) + "\n")
            runs.touch()
            return
        if not resume:
            raise InvalidParameterError(
                f"The results folder {self.path} already holds runs; pass --resume (resume=True) to continue them "
                "or choose another folder."
            )
        saved = json.loads((self.path / SETUP).read_text())
        changed = sorted(k for k in set(saved) | set(self.setup) if saved.get(k) != self.setup.get(k))
        if changed:
            named = [k for k in changed if k != FINGERPRINT]
            what = f"{', '.join(named)} differ" if named else "the target's code, data, claim or canaries differ"
            raise InvalidParameterError(
                f"The results folder {self.path} holds runs of another audit ({what}); "
                "resume with the same audit or choose another folder."
            )
        _drop_partial_line(runs)

    def finished(self) -> dict[int, Any]:
        """Return the records of the finished runs by run index."""
        with open(self.path / RUNS, encoding="utf-8") as lines:
            records = [json.loads(line) for line in lines if line.strip()]
        return {record["run"]: record for record in records}

    def append(self, record: Mapping[str, Any]) -> None:
        """Write one finished run's record (it must hold its index under "run") and flush it to disk."""
        with open(self.path / RUNS, "a", encoding="utf-8") as runs:
            runs.write(json.dumps(jsonable(dict(record))) + "\n")
            runs.flush()
            os.fsync(runs.fileno())

    def write_result(self, result: Mapping[str, Any]) -> Path:
        """Write the audit's final JSON next to its runs; return its path."""
        path = self.path / "result.json"
        path.write_text(json.dumps(jsonable(dict(result)), indent=2) + "\n")
        return path


def _drop_partial_line(path: Path) -> None:
    """Cut a last line that a kill left without its newline."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])
