"""The committed figure data, and an exact comparison of an experiment's JSON with it (a helper of these tests).

`docs/figures/NAME.json` is what `make figures` writes at the committed
seed and full settings; `tests/experiments/quick/NAME.json` is the same
command with `--quick`. The experiments are seeded, so a rerun on the same
code gives the same JSON, number for number, except `seconds` (wall-clock
time): that key is dropped before comparing, and nothing else is. The
JSON contract only ever adds keys: a key in ADDED (added to the JSON after
the committed figures were made) may be in the code's JSON and not in the
committed one, until `make figures` writes it there too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dpaudit.json_values import jsonable

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "docs" / "figures"
QUICK = Path(__file__).resolve().parent / "quick"
VOLATILE = frozenset({"seconds"})
ADDED = frozenset({"estimator"})  # lower_bound.estimator, added with issue 49 (the estimator as --estimator spells it)
SHOWN = 10


def load(path: Path) -> Any:
    """Return the JSON at `path`."""
    return json.loads(path.read_text(encoding="utf-8"))


def as_saved(value: Any) -> Any:
    """Return `value` as an experiment's JSON holds it (`jsonable`, then a JSON round trip)."""
    return json.loads(json.dumps(jsonable(value)))


def comparable(value: Any) -> Any:
    """Return loaded JSON without the VOLATILE keys, so that == is exact equality of everything else."""
    if isinstance(value, dict):
        return {key: comparable(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [comparable(item) for item in value]
    return value


def differences(actual: Any, expected: Any, path: str = "") -> list[str]:
    """Return the paths where two comparable JSON values differ, with both values."""
    if isinstance(actual, dict) and isinstance(expected, dict):
        found = [f"{path}/{key}: only in the committed JSON" for key in expected if key not in actual]
        found += [f"{path}/{key}: not in the committed JSON" for key in actual if key not in expected and key not in ADDED]
        for key in actual.keys() & expected.keys():
            found += differences(actual[key], expected[key], f"{path}/{key}")
        return found
    if isinstance(actual, list) and isinstance(expected, list) and len(actual) == len(expected):
        return [line for i, (a, e) in enumerate(zip(actual, expected)) for line in differences(a, e, f"{path}[{i}]")]
    return [] if actual == expected else [f"{path}: code gives {actual!r}, committed {expected!r}"]


def assert_same_as_committed(data: Any, committed: Path) -> None:
    """Fail, listing the differences, unless `data` (loaded JSON) is the JSON at `committed`, `seconds` aside."""
    assert_same(data, load(committed), str(committed.relative_to(ROOT)))


def assert_same(data: Any, expected: Any, where: str) -> None:
    """Fail, listing the differences, unless `data` is `expected` (loaded JSON, from `where`), `seconds` and ADDED keys aside."""
    found = differences(comparable(data), comparable(expected))
    assert not found, f"{len(found)} differences from {where} (regenerate with `make figures`):\n" + "\n".join(found[:SHOWN])
