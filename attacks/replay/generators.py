"""The random sources a replay hands a mechanism: `Recording` on D, `Replaying` on D′.

Both are `numpy.random.Generator`s (subclasses, so `isinstance` checks and
`np.random.default_rng(rng)` pass them through), and every public sampling
method (`SAMPLING_METHODS`) goes through one interception point. `Recording`
draws from a real bit generator and keeps each call as a `Draw`; `Replaying`
answers the same calls with the recorded noise (the location and the data
of the call on D′ applied to it), and keeps a `Divergence` for every call
that differs: another method or order, another law, another size, more or
fewer calls. A call that differs gets a fresh draw (the frozen noise
rescaled, where only a location-scale law's scale changed), so the run on
D′ finishes and its release can still be compared. Reading the generator's
`bit_generator` or spawning from it leaves the recorded source; both are
noted in `outside` (see `dpaudit.attacks.replay.outside`).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from dpaudit.attacks.replay.draws import DATA, LOCATION, SAMPLING_METHODS, SCALE, Draw, bind, same_value
from dpaudit.attacks.replay.findings import Divergence

__all__ = ["Recording", "Replaying"]

_REAL = np.random.Generator


def _copy(value: Any) -> Any:
    """Return a copy of an array argument or output (a caller may write to it later); other values as they are."""
    return value.copy() if isinstance(value, np.ndarray) else value


def _take(x: Any, idx: np.ndarray, axis: int) -> Any:
    """Return the items of `x` at `idx` along `axis`."""
    return np.take(np.asarray(x), idx, axis=axis)


class _Intercepting(_REAL):
    """A Generator whose sampling methods all go through `_call(method, arguments)` (numpy's inner calls do not).

    `records_draws` tells a sampler that draws from a library's own generator
    that it may draw through this one instead, at the library's draw sites
    (the Opacus adapter: `dpaudit.mechanisms.adapters.opacus_draws`).
    """

    records_draws = True

    def __init__(self, bit_generator: np.random.BitGenerator) -> None:
        super().__init__(bit_generator)
        self._inside = False
        self.outside: list[str] = []

    def _call(self, method: str, arguments: dict[str, Any]) -> Any:
        raise NotImplementedError

    @property
    def bit_generator(self) -> np.random.BitGenerator:
        """The underlying bit generator: reading it leaves the recorded source, and is noted."""
        self.outside.append("the rng's bit_generator, read directly")
        return super().bit_generator

    def spawn(self, n_children: int) -> list[np.random.Generator]:
        """Return numpy's children: their draws are not recorded, and spawning is noted."""
        self.outside.append("generators spawned from the rng (rng.spawn)")
        return super().spawn(n_children)

    def _noise(self, method: str, arguments: dict[str, Any]) -> Any:
        """Return a real draw: indices for a call on data (`DATA`), else what numpy's method returns."""
        data = DATA.get(method)
        items = arguments.get(data) if data else None
        if data is None or isinstance(items, (int, np.integer)):
            return getattr(_REAL, method)(self, **arguments)
        arr, axis = np.asarray(items), arguments.get("axis")
        if method == "choice":
            n = arr.shape[axis or 0]
            return _REAL.choice(self, n, size=arguments["size"], replace=arguments["replace"], p=arguments["p"],
                                shuffle=arguments["shuffle"])
        if method == "permuted" and axis is None:
            return _REAL.permutation(self, arr.size)
        if method == "permuted":
            shape = [1] * arr.ndim
            shape[axis] = arr.shape[axis]
            return _REAL.permuted(self, np.broadcast_to(np.arange(arr.shape[axis]).reshape(shape), arr.shape).copy(),
                                  axis=axis)
        return _REAL.permutation(self, arr.shape[axis or 0])


def _applied(method: str, arguments: dict[str, Any], idx: Any) -> Any:
    """Return the output of a call on data (`DATA`) from its indices, writing in place for shuffle and `out=`."""
    items, axis = arguments[DATA[method]], arguments.get("axis")
    if isinstance(items, (int, np.integer)):
        return _copy(idx)
    if method == "permuted":
        arr = np.asarray(items)
        out = arr.ravel()[idx].reshape(arr.shape) if axis is None else np.take_along_axis(arr, idx, axis=axis)
        return _written(arguments, out)
    if method == "shuffle":
        if isinstance(items, np.ndarray):
            items[...] = _take(items.copy(), idx, axis or 0)
        else:
            items[:] = [items[i] for i in idx]
        return None
    out = _take(items, idx, axis or 0)
    return out[()] if isinstance(out, np.ndarray) and out.ndim == 0 else out


def _written(arguments: dict[str, Any], value: Any) -> Any:
    """Return `value`, written into the call's `out=` array first when it gave one (as numpy does)."""
    out = arguments.get("out")
    if out is None:
        return value
    out[...] = value
    return out


def _intercept(method: str) -> Callable[..., Any]:
    """Return the method of `_Intercepting` that sends `Generator.method`'s calls to `_call`."""
    real = getattr(_REAL, method)

    def intercepted(self: _Intercepting, *args: Any, **kwargs: Any) -> Any:
        if self._inside:  # numpy's own call from another of its methods (permutation calls shuffle)
            return real(self, *args, **kwargs)
        self._inside = True
        try:
            return self._call(method, bind(method, args, kwargs))
        finally:
            self._inside = False

    intercepted.__name__ = intercepted.__qualname__ = method
    intercepted.__doc__ = real.__doc__
    return intercepted


for _method in SAMPLING_METHODS:
    setattr(_Intercepting, _method, _intercept(_method))


class Recording(_Intercepting):
    """A Generator that draws from `bit_generator` and records every call in `tape` (a list of `Draw`)."""

    def __init__(self, bit_generator: np.random.BitGenerator) -> None:
        super().__init__(bit_generator)
        self.tape: list[Draw] = []

    def _call(self, method: str, arguments: dict[str, Any]) -> Any:
        kept = {k: _copy(v) for k, v in arguments.items() if k != "out"}
        noise = self._noise(method, arguments)
        if method in DATA and not isinstance(arguments.get(DATA[method]), (int, np.integer)):
            output = _applied(method, arguments, noise)
        else:
            output = noise
            if method in LOCATION:
                noise = np.subtract(output, arguments[LOCATION[method]])
        self.tape.append(Draw(method, kept, _copy(noise), _copy(output)))
        return output


class Replaying(_Intercepting):
    """A Generator that answers the calls of `tape` with their recorded noise, and keeps each difference in `divergences`.

    Calls that differ from the tape draw from `bit_generator` (a stream of
    their own), so the run finishes; `finish()` notes calls the tape has
    and the run did not make. `replayed` maps the position of each call
    answered from the tape to the call as D′ made it.
    """

    def __init__(self, tape: list[Draw], bit_generator: np.random.BitGenerator) -> None:
        super().__init__(bit_generator)
        self.tape = tape
        self.position = 0
        self.divergences: list[Divergence] = []
        self.replayed: dict[int, Draw] = {}

    def _call(self, method: str, arguments: dict[str, Any]) -> Any:
        index = self.position
        self.position += 1
        law = Draw(method, arguments, None, None).describe()
        if index >= len(self.tape):
            return self._diverged(Divergence(index, "count", "", law), method, arguments)
        recorded = self.tape[index]
        if recorded.method != method:
            return self._diverged(Divergence(index, "method", recorded.describe(), law), method, arguments)
        differ = _differing(recorded.law(), Draw(method, arguments, None, None).law())
        if differ:
            kind = "size" if set(differ) <= {"size"} or (method in DATA and set(differ) <= {DATA[method]}) else "law"
            divergence = Divergence(index, kind, recorded.describe(), law)
            if method in SCALE and set(differ) == {SCALE[method]}:
                return self._rescaled(divergence, recorded, arguments)
            return self._diverged(divergence, method, arguments)
        output = self._output(index, recorded, arguments)
        self.replayed[index] = Draw(method, {k: _copy(v) for k, v in arguments.items() if k != "out"},
                                    recorded.noise, _copy(output))
        return output

    def _output(self, index: int, recorded: Draw, arguments: dict[str, Any]) -> Any:
        """Return the recorded noise as the output of this call: the location of D′ added, the data of D′ taken."""
        method = recorded.method
        if method in DATA and not isinstance(arguments.get(DATA[method]), (int, np.integer)):
            return _applied(method, arguments, recorded.noise)
        location = LOCATION.get(method)
        if location is None or same_value(recorded.arguments[location], arguments[location]):
            return _written(arguments, _copy(recorded.output))
        moved = np.add(arguments[location], recorded.noise)
        if np.shape(moved) != recorded.shape:
            self.divergences.append(Divergence(index, "size", recorded.describe(), Draw(method, arguments, None, None).describe()))
        return moved[()] if isinstance(moved, np.ndarray) and moved.ndim == 0 else moved

    def _rescaled(self, divergence: Divergence, recorded: Draw, arguments: dict[str, Any]) -> Any:
        """Return the recorded noise rescaled to this call's scale (a divergence of scale alone), the location added."""
        self.divergences.append(divergence)
        method = recorded.method
        ratio = np.divide(arguments[SCALE[method]], recorded.arguments[SCALE[method]])
        noise = np.multiply(recorded.noise, ratio)
        location = LOCATION.get(method)
        value = noise if location is None else np.add(arguments[location], noise)
        self.replayed[divergence.index] = Draw(method, dict(arguments), noise, _copy(value))
        return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value

    def _diverged(self, divergence: Divergence, method: str, arguments: dict[str, Any]) -> Any:
        """Return a fresh draw for a call that differs from the tape, keeping the divergence."""
        self.divergences.append(divergence)
        noise = self._noise(method, arguments)
        if method in DATA and not isinstance(arguments.get(DATA[method]), (int, np.integer)):
            return _applied(method, arguments, noise)
        return noise

    def finish(self) -> None:
        """Note the calls of the tape that the run on D′ did not make (one divergence of count)."""
        if self.position < len(self.tape):
            missing = self.tape[self.position]
            self.divergences.append(Divergence(self.position, "count", missing.describe(), ""))


def _differing(recorded: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    """Return the names of the law's arguments whose values differ between the two calls."""
    return [k for k in recorded.keys() | replayed.keys() if not same_value(recorded.get(k), replayed.get(k))]


