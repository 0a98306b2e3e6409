"""Writing an experiment's figure and data: NAME.png and NAME.json side by side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpaudit.json_values import jsonable

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["save"]


def save(out_dir: Path, name: str, figure: Figure, data: dict[str, Any]) -> dict[str, Any]:
    """Write `figure` to out_dir/NAME.png and `data` to out_dir/NAME.json; return the JSON's content."""
    out_dir.mkdir(parents=True, exist_ok=True)
    figure.savefig(out_dir / f"{name}.png", dpi=110)
    content = jsonable({"experiment": name, **data, "figure": f"{name}.png"})
    (out_dir / f"{name}.json").write_text(json.dumps(content, indent=2), encoding="utf-8")
    return content
