"""Writing an experiment's figure and data: NAME.png and NAME.json side by side."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure


def jsonable(value: Any) -> Any:
    """Return `value` with numpy scalars/arrays as Python numbers/lists and non-finite floats as None."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def save(out_dir: Path, name: str, figure: Figure, data: dict[str, Any]) -> dict[str, Any]:
    """Write `figure` to out_dir/NAME.png and `data` to out_dir/NAME.json; return the JSON's content."""
    out_dir.mkdir(parents=True, exist_ok=True)
    figure.savefig(out_dir / f"{name}.png", dpi=110)
    content = jsonable({"experiment": name, **data, "figure": f"{name}.png"})
    (out_dir / f"{name}.json").write_text(json.dumps(content, indent=2), encoding="utf-8")
    return content
