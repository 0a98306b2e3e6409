"""JSON values: what results, run stores and experiments write (a foundation beside `errors` and `validation`)."""

from __future__ import annotations

import math
from typing import Any, Mapping

__all__ = ["jsonable"]


def jsonable(value: Any) -> Any:
    """Return `value` with numpy arrays and scalars, data frames (as dicts of columns), nested in dicts, lists and tuples, as JSON types.

    Non-finite floats become None (JSON has no NaN or infinity).
    """
    if hasattr(value, "to_dict") and hasattr(value, "columns"):
        return jsonable(value.to_dict(orient="list"))
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist"):
        return jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
