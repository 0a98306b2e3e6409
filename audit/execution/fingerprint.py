"""A fingerprint of everything that determines an audit's runs, so that stored runs are reused only by the audit that made them.

A run store keeps training runs so that an interrupted audit resumes; a
resume that took the runs of another target (another training function,
other data, another claim) would certify the other target's evidence under
this one's name. The fingerprint is a SHA-256 over a canonical form of:
the target's identity and, for a user's code, a digest of its functions
(their compiled code, the values their closures and defaults hold, and the
module-level values they read, followed into the functions they call), a
digest of its data, and the audit's configuration, claim, canaries,
dataset, game and seed. Two audits with one fingerprint play the same runs.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import types
from typing import Any

import numpy as np

__all__ = ["code_digest", "fingerprint", "value_digest"]

DEPTH = 4
"""How many calls deep a function's code is followed into the functions and values it refers to."""


def fingerprint(**parts: Any) -> str:
    """Return the SHA-256 (hex) of `parts`, each turned into a stable digest by `value_digest`."""
    canonical = json.dumps({name: value_digest(value) for name, value in sorted(parts.items())}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def value_digest(value: Any, depth: int = DEPTH, seen: frozenset[int] = frozenset()) -> str:
    """Return a digest of `value` that changes when what it holds changes.

    Arrays (numpy, or torch tensors) by dtype, shape and bytes; numbers, strings, None and booleans by
    their repr; mappings and sequences element by element; functions and
    callables by `code_digest`; modules by name; anything else by its type
    and, where it has them, its attributes.
    """
    if type(value).__module__.partition(".")[0] == "torch" and hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.ascontiguousarray(value)
        if array.dtype == object:
            return _hash(["object-array", array.shape, [value_digest(v, depth, seen) for v in array.ravel().tolist()]])
        return _hash(["array", str(array.dtype), array.shape, hashlib.sha256(array.tobytes()).hexdigest()])
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return _hash([type(value).__name__, repr(value)])
    if isinstance(value, dict):
        return _hash(["dict", sorted((repr(k), value_digest(v, depth, seen)) for k, v in value.items())])
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [value_digest(v, depth, seen) for v in value]
        return _hash([type(value).__name__, sorted(items) if isinstance(value, (set, frozenset)) else items])
    if isinstance(value, types.ModuleType):
        return _hash(["module", value.__name__])
    if callable(value) and not isinstance(value, type):
        return code_digest(value, depth, seen)
    if isinstance(value, type):
        return _hash(["type", value.__module__, value.__qualname__])
    return _attribute_digest(value, depth, seen)


def code_digest(fn: Any, depth: int = DEPTH, seen: frozenset[int] = frozenset()) -> str:
    """Return a digest of a callable: its compiled code, closure, defaults and the module-level values it reads.

    Followed `depth` calls deep (functions it calls, by name or in its
    closure); a callable object is digested through its `__call__` and its
    attributes; a builtin by its name. Sound as a change detector for code
    that reads its settings from these places, which is where Python code
    keeps them; a value read from a file or the environment at run time is
    not seen.
    """
    if id(fn) in seen or depth < 0:
        return _hash(["seen", getattr(fn, "__qualname__", type(fn).__name__)])
    seen = seen | {id(fn)}
    if isinstance(fn, types.MethodType):
        return _hash(["method", code_digest(fn.__func__, depth, seen), value_digest(fn.__self__, depth - 1, seen)])
    code = getattr(fn, "__code__", None)
    if code is None:
        call = getattr(type(fn), "__call__", None)
        if getattr(call, "__code__", None) is not None:
            return _hash(["callable", code_digest(call, depth, seen), _attribute_digest(fn, depth - 1, seen)])
        return _hash(["builtin", getattr(fn, "__module__", None), getattr(fn, "__qualname__", repr(fn))])
    cells = [cell.cell_contents for cell in (fn.__closure__ or ()) if _filled(cell)]
    return _hash([
        "function", fn.__module__, fn.__qualname__, hashlib.sha256(marshal.dumps(_without_lines(code))).hexdigest(),
        [value_digest(c, depth - 1, seen) for c in cells],
        value_digest(fn.__defaults__, depth - 1, seen), value_digest(fn.__kwdefaults__, depth - 1, seen),
        _globals_digest(fn, code, depth - 1, seen),
    ])


def _globals_digest(fn: Any, code: types.CodeType, depth: int, seen: frozenset[int]) -> list[Any]:
    """Return digests of the module-level names the code (and its nested code) reads, in name order."""
    found = getattr(fn, "__globals__", {})
    names = sorted(n for n in _names(code) if n in found)
    return [(name, value_digest(found[name], depth, seen)) for name in names]


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _without_lines(code: types.CodeType) -> types.CodeType:
    """Return `code` without its file name and line numbers, so that moving a function in its file does not change its digest."""
    consts = tuple(_without_lines(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_filename="", co_firstlineno=1, co_consts=consts)


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _attribute_digest(value: Any, depth: int, seen: frozenset[int]) -> str:
    """Return a digest of an object's type and its instance attributes (or its slots)."""
    if id(value) in seen or depth < 0:
        return _hash(["seen-object", type(value).__qualname__])
    seen = seen | {id(value)}
    attributes = getattr(value, "__dict__", None)
    if attributes is None:
        attributes = {name: getattr(value, name) for name in getattr(type(value), "__slots__", ()) if hasattr(value, name)}
    return _hash(["object", type(value).__module__, type(value).__qualname__,
                  sorted((name, value_digest(v, depth - 1, seen)) for name, v in attributes.items())])


def _hash(parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, default=repr, sort_keys=True).encode()).hexdigest()
