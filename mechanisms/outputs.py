"""What a black box returned, made into the outputs an audit works on, or one sentence saying why it cannot be.

Non-finite numbers are outputs like any other: NaN, +inf and −inf are
mapped to ±NONFINITE before anything else sees them (and finite numbers
beyond ±NONFINITE clipped to it, so squares of outputs stay finite), and a None output
(among numbers, or always: a function without `return` is a constant
mechanism) to NONFINITE as well; a batch that is None is an error. The map
is a fixed post-processing of the mechanism's output, so a bound certified
on the mapped outputs holds for the mechanism itself (post-processing
cannot raise ε); it only merges those outputs with each other. Objects
(numbers mixed with text or None, as per-output functions return them) and
vectors of text become floats element by element (`number`), another fixed
map: the text of a number is that number, other text (or bytes that are
not UTF-8) a code of it; so are strings, which thereby compare whatever mix
a batch holds. A complex output is two real coordinates, its real and
imaginary parts (a last axis of 2), so neither part is lost.
"""

from __future__ import annotations

import decimal
import numbers
import types
import zlib
from typing import Any

import numpy as np
from dpaudit.errors import MechanismError

__all__ = ["NONFINITE", "check_outputs", "check_shape", "check_tables", "number", "texts_of"]

NONFINITE = 2.0**250  # far beyond any real output, yet sums of its fourth power (quadratic features' spread) stay finite
TEXTS_KEPT = 4096  # the texts `texts_of` can name: as many as a discrete test tells apart (MAX_CATEGORIES)

_texts: dict[float, str] = {}


def check_outputs(name: str, out: Any, size: int) -> np.ndarray:
    """Return `out` as an array of `size` outputs, or raise `MechanismError` saying what is wrong."""
    if out is None or isinstance(out, types.GeneratorType):
        raise MechanismError(f"Mechanism '{name}' returned {_what(type(out))} where a batch of outputs was asked for.")
    try:
        arr = np.asarray(out)
    except ValueError as exc:
        raise MechanismError(f"Mechanism '{name}' returned outputs of changing shape ({exc}).") from exc
    if arr.ndim == 0 or arr.shape[0] != size:
        got = "one scalar" if arr.ndim == 0 else f"{arr.shape[0]} outputs"
        raise MechanismError(f"Mechanism '{name}' returned {got} where {size} outputs were asked for.")
    if arr.dtype == object and arr.ndim == 1 and arr.size and isinstance(arr[0], (list, tuple, np.ndarray)):
        raise MechanismError(f"Mechanism '{name}' returned outputs of changing shape.")
    if arr.dtype == object or arr.dtype.kind in "US":
        arr = _as_numbers(name, arr)
    if arr.dtype.kind == "c":
        arr = np.stack([arr.real, arr.imag], axis=-1)
    if arr.dtype.kind == "f" and arr.dtype != np.float64:
        arr = arr.astype(np.float64)
    if arr.dtype.kind == "f" and arr.size and not (arr.min() >= -NONFINITE and arr.max() <= NONFINITE):  # NaN fails both
        arr = np.clip(np.nan_to_num(arr.astype(np.float64), nan=NONFINITE), -NONFINITE, NONFINITE)
    return arr


def check_tables(name: str, out: Any, size: int) -> list[Any]:
    """Return a batch of `size` released tables as a list (each a data frame, kept, or a 2-D array), or raise `MechanismError`.

    A batch is a sequence of tables or an array of shape (size, rows,
    columns); a one-dimensional table is one column. Only a transform that
    turns each table into numbers (`dpaudit.mechanisms.table_features.tabulate`)
    accepts them; `check_outputs` then checks what it made.
    """
    if out is None or isinstance(out, types.GeneratorType) or _is_frame(out) or isinstance(out, (str, bytes)):
        what = "one table" if _is_frame(out) else _what(type(out))
        raise MechanismError(f"Mechanism '{name}' returned {what} where a batch of {size} tables was asked for.")
    tables = list(out)
    if len(tables) != size:
        raise MechanismError(f"Mechanism '{name}' returned {len(tables)} tables where {size} were asked for.")
    return [_table(name, t) for t in tables]


def _is_frame(x: Any) -> bool:
    """Return whether `x` is a data frame (it has columns and converts to numpy)."""
    return hasattr(x, "columns") and hasattr(x, "to_numpy")


def _table(name: str, table: Any) -> Any:
    """Return one released table: a data frame as it is, else a 2-D array (a vector is one column)."""
    if _is_frame(table):
        return table
    arr = np.asarray(table)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise MechanismError(f"Mechanism '{name}' released a table of shape {arr.shape}; a table has rows and columns.")
    return arr


def check_shape(name: str, out: np.ndarray, shape: tuple[int, ...], where: str) -> np.ndarray:
    """Return `out` if each of its outputs has `shape` (that of the first batch); else raise `MechanismError` saying so.

    Dtypes need no check: after `check_outputs` every batch holds numbers,
    each output mapped by the same fixed map whatever else its batch holds.
    """
    if out.shape[1:] != tuple(shape):
        raise MechanismError(
            f"Mechanism '{name}' returned outputs of shape {out.shape[1:]} {where}, "
            f"where the first batch had {tuple(shape)}; outputs must keep one shape."
        )
    return out


def _as_numbers(name: str, arr: np.ndarray) -> np.ndarray:
    """Return objects or text as floats, one element at a time (`number`), so the map is fixed."""
    if arr.dtype.kind in "US":
        values, inverse = np.unique(arr.ravel(), return_inverse=True)
        return np.array([number(v) for v in values.tolist()], dtype=np.float64)[inverse.ravel()].reshape(arr.shape)
    flat = arr.ravel().tolist()
    unusable = next((type(x) for x in flat if isinstance(x, (dict, set, types.GeneratorType))), None)
    if unusable is not None:
        raise MechanismError(f"Mechanism '{name}' returned {_what(unusable)}; return numbers, strings or arrays of them.")
    return np.array([number(x) for x in flat], dtype=np.float64).reshape(arr.shape)


def number(x: Any) -> float:
    """Return one output element as a number: itself, NaN for None, the number a text spells, else a code of its text (CRC-32).

    Every real number (ints of any size, fractions, decimals, numpy
    scalars) is its float, a map that keeps order, so a threshold test sees
    it; ints beyond 2⁵³ round to their neighbours and those beyond the
    float range become ±inf, merges of outputs that post-processing allows.
    """
    if x is None:
        return np.nan
    if isinstance(x, (numbers.Real, decimal.Decimal, np.number)) and not isinstance(x, np.complexfloating):
        try:
            return float(x)
        except OverflowError:
            return np.inf if x > 0 else -np.inf
    if isinstance(x, bytes):
        return _bytes_number(x)
    text = str(x)
    try:
        return float(text)
    except ValueError:
        return _code(text.encode())


def _bytes_number(x: bytes) -> float:
    """Return bytes as the number their UTF-8 text spells, else a code of the bytes themselves (UTF-8 or not)."""
    try:
        return float(x.decode())
    except (UnicodeDecodeError, ValueError):
        return _code(x)


def _code(raw: bytes) -> float:
    """Return the code of a text or bytes output (CRC-32), and remember which text it stands for (`texts_of`)."""
    code = float(zlib.crc32(raw))
    if len(_texts) < TEXTS_KEPT:
        _texts.setdefault(code, raw.decode(errors="backslashreplace"))
    return code


def texts_of(codes: np.ndarray) -> list[str] | None:
    """Return the texts whose codes `codes` are, or None unless each is the code of a text output seen in this process."""
    texts = []
    for code in codes.tolist():
        if code not in _texts:
            return None
        texts.append(_texts[code])
    return texts


def _what(kind: type) -> str:
    """Return how to name a returned value of type `kind` that is not an output: None for a batch, a dict, a set or a generator."""
    if kind is type(None):
        return "None (does the function forget to return its output?)"
    return f"a {kind.__name__}"
