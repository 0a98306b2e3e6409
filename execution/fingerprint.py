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

A value it cannot read (an object whose attributes raise, a tensor numpy
cannot hold) is never skipped, which would let a changed value pass as the
same: `fingerprint` raises `UnfingerprintableError` naming it and the path
that reached it (`train → per_example → ...`), so a run store is refused in
one sentence rather than reused blind.
"""

from __future__ import annotations

import functools
import hashlib
import json
import marshal
import sys
import sysconfig
import types
from pathlib import Path
from typing import Any

import numpy as np
from dpaudit.errors import InvalidParameterError

__all__ = ["UnfingerprintableError", "code_digest", "fingerprint", "value_digest"]

DEPTH = 4
"""How many calls deep a function's code is followed into the functions and values it refers to."""


class UnfingerprintableError(InvalidParameterError):
    """A value the fingerprint cannot read, with the path of names that reached it."""

    def __init__(self, value: Any, reason: BaseException, path: tuple[str, ...] = ()) -> None:
        self.value, self.reason, self.path = value, reason, path
        where = " → ".join(path) or "a value"
        super().__init__(
            f"The run store cannot fingerprint {where} (a {_type_name(value)}: {type(reason).__name__}: {reason}), so it "
            "could not tell a changed value from the same one; run without a results folder, or keep that value out of "
            "what the training code reads at module level."
        )

    def within(self, name: str) -> UnfingerprintableError:
        """Return this error with `name` (the container that held the value) in front of its path."""
        return UnfingerprintableError(self.value, self.reason, (name, *self.path))


def fingerprint(**parts: Any) -> str:
    """Return the SHA-256 (hex) of `parts`, each turned into a stable digest by `value_digest`.

    Raises:
        UnfingerprintableError: a value in `parts` cannot be read; it names the value and the path to it.
    """
    canonical = json.dumps({name: _named(name, value, DEPTH, frozenset()) for name, value in sorted(parts.items())},
                           sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def value_digest(value: Any, depth: int = DEPTH, seen: frozenset[int] = frozenset()) -> str:
    """Return a digest of `value` that changes when what it holds changes.

    Arrays (numpy, or torch tensors: instances, never the class) by dtype,
    shape and bytes; numbers, strings, None and booleans by their repr;
    mappings and sequences element by element; functions and callables by
    `code_digest`; modules by name; classes by `class_digest`; anything
    else by its class and its attributes.

    Raises:
        UnfingerprintableError: reading `value` (or what it holds) raised; nothing is skipped.
    """
    try:
        return _value_digest(value, depth, seen)
    except UnfingerprintableError:
        raise
    except Exception as error:  # a user's object may raise anything when read: name it, never skip it
        raise UnfingerprintableError(value, error) from error


def _value_digest(value: Any, depth: int, seen: frozenset[int]) -> str:
    if _is_tensor(value):
        value = value.detach().cpu().numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.ascontiguousarray(value)
        if array.dtype == object:
            return _hash(["object-array", array.shape,
                          [_named(f"[{i}]", v, depth, seen) for i, v in enumerate(array.ravel().tolist())]])
        return _hash(["array", str(array.dtype), array.shape, hashlib.sha256(array.tobytes()).hexdigest()])
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return _hash([type(value).__name__, repr(value)])
    if isinstance(value, dict):
        return _hash(["dict", sorted((repr(k), _named(str(k), v, depth, seen)) for k, v in value.items())])
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_named(f"[{i}]", v, depth, seen) for i, v in enumerate(value)]
        return _hash([type(value).__name__, sorted(items) if isinstance(value, (set, frozenset)) else items])
    if isinstance(value, types.ModuleType):
        return _hash(["module", value.__name__])
    if isinstance(value, type):
        return class_digest(value, depth, seen)
    if callable(value):
        return code_digest(value, depth, seen)
    return _attribute_digest(value, depth, seen)


def _is_tensor(value: Any) -> bool:
    """Return True when `value` is a torch tensor (an instance of torch.Tensor, never the class itself), without importing torch."""
    return not isinstance(value, type) and any(
        base.__name__ == "Tensor" and base.__module__.partition(".")[0] == "torch" for base in type(value).__mro__
    )


def _named(name: str, value: Any, depth: int, seen: frozenset[int]) -> str:
    """Return `value_digest(value)`; a value it cannot read is named with `name` in front of its path."""
    try:
        return value_digest(value, depth, seen)
    except UnfingerprintableError as error:
        raise error.within(name) from error.reason


def class_digest(cls: type, depth: int = DEPTH, seen: frozenset[int] = frozenset()) -> str:
    """Return a digest of a class: its module and qualified name, and the code of the functions it defines.

    A class is not an instance: its attributes are its methods, digested by
    `code_digest` one call less deep (those of its own bases too, so that
    editing a user's model class changes the digest). A class of an
    installed library or of Python (torch.Tensor, object, int) is digested
    by its name and the library's version, as its functions are.
    """
    if id(cls) in seen or depth < 0:
        return _hash(["seen-type", cls.__module__, cls.__qualname__])
    seen = seen | {id(cls)}
    library = _library(cls)
    if library:
        return _hash(["type", cls.__module__, cls.__qualname__, library])
    methods = [
        (f"{base.__qualname__}.{name}", _named(f"{base.__qualname__}.{name}", member, depth - 1, seen))
        for base in cls.__mro__ if base.__module__ != "builtins" and not _library(base)
        for name, member in sorted(vars(base).items()) if isinstance(member, types.FunctionType)
    ]
    return _hash(["type", cls.__module__, cls.__qualname__, methods])


def code_digest(fn: Any, depth: int = DEPTH, seen: frozenset[int] = frozenset()) -> str:
    """Return a digest of a callable: its compiled code, closure, defaults and the module-level values it reads.

    Followed `depth` calls deep (functions it calls, by name or in its
    closure); a callable object is digested through its `__call__` and its
    attributes; a `functools.partial` through its function and arguments; a
    builtin by its name. A function of an installed library (`_library`) is
    digested by its name and the library's version instead of its code and
    module state (a library's registries differ from one process to the
    next), but its closure and defaults still are: `vmap(grad(loss))` is
    torch's function holding the user's `loss`. Sound as a change detector
    for code that reads its settings from these places, which is where
    Python code keeps them; a value read from a file or the environment at
    run time is not seen.
    """
    if id(fn) in seen or depth < 0:
        return _hash(["seen", getattr(fn, "__qualname__", type(fn).__name__)])
    seen = seen | {id(fn)}
    if isinstance(fn, types.MethodType):
        return _hash(["method", code_digest(fn.__func__, depth, seen), _named("__self__", fn.__self__, depth - 1, seen)])
    if isinstance(fn, functools.partial):
        return _hash(["partial", _named("func", fn.func, depth, seen), _named("args", fn.args, depth - 1, seen),
                      _named("keywords", fn.keywords, depth - 1, seen)])
    code = getattr(fn, "__code__", None)
    if code is None:
        call = getattr(type(fn), "__call__", None)
        if getattr(call, "__code__", None) is not None:
            return _hash(["callable", code_digest(call, depth, seen), _attribute_digest(fn, depth - 1, seen)])
        return _hash(["builtin", getattr(fn, "__module__", None), getattr(fn, "__qualname__", repr(fn))])
    cells = [(name, cell.cell_contents) for name, cell in zip(code.co_freevars, fn.__closure__ or ()) if _filled(cell)]
    library = _library(fn)
    return _hash([
        "function", fn.__module__, fn.__qualname__,
        library or hashlib.sha256(marshal.dumps(_without_lines(code))).hexdigest(),
        [_named(name, c, depth - 1, seen) for name, c in cells],
        _named("defaults", fn.__defaults__, depth - 1, seen), _named("defaults", fn.__kwdefaults__, depth - 1, seen),
        [] if library else _globals_digest(fn, code, depth - 1, seen),
    ])


def _library(owner: Any) -> str | None:
    """Return "library NAME VERSION" when `owner` (a function or class) is defined in an installed package or the
    standard library, else None (the user's code, an editable install included, whose code is digested)."""
    module = sys.modules.get(getattr(owner, "__module__", None) or "")
    file = getattr(module, "__file__", None)
    if file is None:
        return None
    parts = Path(file).resolve().parts
    installed = "site-packages" in parts or "dist-packages" in parts
    if not installed and Path(file).resolve().is_relative_to(Path(sysconfig.get_paths()["stdlib"]).resolve()):
        return f"library python {sys.version}"
    top = sys.modules.get(module.__name__.partition(".")[0])
    return f"library {top.__name__} {getattr(top, '__version__', None)}" if installed else None


def _globals_digest(fn: Any, code: types.CodeType, depth: int, seen: frozenset[int]) -> list[Any]:
    """Return digests of the module-level names the code (and its nested code) reads, in name order."""
    found = getattr(fn, "__globals__", {})
    names = sorted(n for n in _names(code) if n in found)
    return [(name, _named(name, found[name], depth, seen)) for name in names]


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
    """Return a digest of an object's class (`class_digest`: its methods' code) and its instance attributes (or slots)."""
    if id(value) in seen or depth < 0:
        return _hash(["seen-object", type(value).__qualname__])
    seen = seen | {id(value)}
    attributes = getattr(value, "__dict__", None)
    if attributes is None:
        attributes = {name: getattr(value, name) for name in getattr(type(value), "__slots__", ()) if hasattr(value, name)}
    return _hash(["object", class_digest(type(value), depth - 1, seen),
                  sorted((name, _named(name, v, depth - 1, seen)) for name, v in attributes.items())])


def _type_name(value: Any) -> str:
    """Return what `value` is, for a message: a class's own name, or an object's class."""
    kind = value if isinstance(value, type) else type(value)
    return f"{'class ' if isinstance(value, type) else ''}{kind.__module__}.{kind.__qualname__}"


def _hash(parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, default=repr, sort_keys=True).encode()).hexdigest()
