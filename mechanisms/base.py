"""The black-box mechanism: a randomized function of a dataset with the claim made about it.

In the manner of OpenDP's measurements, the privacy claim and the
neighbouring relation travel with the mechanism object; in the manner of
DP-Auditorium, a mechanism is called for a batch of samples (first axis =
samples). An attack may only call `sample`.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms.datasets import records_of_pair
from dpaudit.mechanisms.deferred_event import UNSUPPORTED, DeferredEvent
from dpaudit.mechanisms.neighbours import (
    NeighbourCheck,
    answer_of,
    by_relation,
    domain_of,
    in_domain,
    inserted,
    sees_any_length,
    unchecked,
)
from dpaudit.mechanisms.outputs import check_outputs
from dpaudit.mechanisms.records import RecordSpec
from dpaudit.validation import check_delta, check_epsilon, check_int

if TYPE_CHECKING:
    from dp_accounting import dp_event

__all__ = ["Claim", "Mechanism", "Relation", "Sampler", "check_pair", "fresh_copy", "not_neighbours"]

Sampler = Callable[[Any, int, np.random.Generator], Any]


class Relation(str, enum.Enum):
    """The neighbouring relation a privacy claim is about."""

    ADD_REMOVE = "add-remove"
    REPLACE_ONE = "replace-one"


@dataclasses.dataclass(frozen=True)
class Claim:
    """A privacy claim: (epsilon, delta)-DP with respect to `relation`."""

    epsilon: float
    delta: float = 0.0
    relation: Relation = Relation.ADD_REMOVE

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, "epsilon", "Claim"))
        object.__setattr__(self, "delta", check_delta(self.delta, "delta", "Claim"))
        object.__setattr__(self, "relation", _relation(self.relation))

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON `claim` object."""
        return {"epsilon": self.epsilon, "delta": self.delta, "relation": self.relation.value}

    def describe(self) -> str:
        """Return the claim as every report prints it: "ε = 1, δ = 1e-05 (add-remove)"."""
        return f"ε = {self.epsilon:g}, δ = {self.delta:g} ({self.relation.value})"


def _relation(value: object) -> Relation:
    try:
        return Relation(value)
    except ValueError:
        choices = ", ".join(repr(r.value) for r in Relation)
        raise InvalidParameterError(
            f"The 'relation' parameter must be one of {choices}; got {value!r} instead."
        ) from None


class _EventField:
    """The `event` field of a `Mechanism`: kept as given; a `DeferredEvent` is built on first read, then kept built.

    `Mechanism.declared_event()` reads it without building it. The default
    (no event given) is `UNSUPPORTED`, deferred too.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = f"_{name}"

    def __get__(self, mech: Any, owner: type | None = None) -> Any:
        if mech is None:
            return UNSUPPORTED
        value = mech.__dict__[self.key]
        if isinstance(value, DeferredEvent):
            value = mech.__dict__[self.key] = value.build()
        return value

    def __set__(self, mech: Any, value: Any) -> None:
        mech.__dict__[self.key] = value


@dataclasses.dataclass(frozen=True)
class Mechanism:
    """A randomized mechanism run as a black box.

    Attributes:
        name: registry name or the user's label.
        sampler: `sampler(data, size, rng)` returns `size` independent outputs
            on `data`, stacked along the first axis.
        claim: the (ε, δ) its author claims, and for which neighbouring relation.
        event: what the mechanism actually does, as a dp_accounting event; the
            theory upper bound is computed from it. `UnsupportedDpEvent` when
            no analysis is known (the claim is then the only upper bound);
            `BrokenClaimDpEvent` for a known-broken variant (no upper bound).
            May be given as a `DeferredEvent`, built when first read.
        default_pair: the worst-case neighbouring datasets known for it.
        neighbours: answers True or None when (d0, d1) are neighbours under
            the mechanism's relation, else False or a sentence saying why
            not (`not_neighbours` says which pairs it sees).
        null_record: the record that stands for "no record" (e.g. 0 for a
            sum), or None: without one, equal-length datasets are never
            add-remove neighbours.
        records: what a record may be (`dpaudit.mechanisms.records`), the
            declaration canaries are made from; None: only the default
            pair's records are known.
        params: the parameters it was built with (reported in the JSON).
    """

    name: str
    sampler: Sampler
    claim: Claim
    event: dp_event.DpEvent | DeferredEvent = _EventField()
    default_pair: tuple[Any, Any] | None = None
    neighbours: NeighbourCheck | None = None
    null_record: Any = None
    records: RecordSpec | None = None
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    description: str = ""

    def __post_init__(self) -> None:
        pair = self.default_pair
        if pair is not None and (isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2):
            raise InvalidParameterError(
                f"The default_pair of mechanism '{self.name}' must be two datasets (d0, d1); got {pair!r:.60}."
            )

    def declared_event(self) -> dp_event.DpEvent | DeferredEvent:
        """Return the event as given, a `DeferredEvent` left unbuilt (reading `event` builds it, importing dp_accounting)."""
        return self.__dict__["_event"]

    def sample(self, data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        """Return `size` outputs of the mechanism on `data` as an array (first axis = samples).

        The sampler gets a fresh copy of `data` (`fresh_copy`), so the
        caller's data never change. Raises `MechanismError` naming the
        mechanism when it raises or exits, or returns
        the wrong number of outputs, outputs of changing shape, None, dicts
        or generators (`dpaudit.mechanisms.outputs.check_outputs`).
        """
        size = check_int(size, "size", f"{self.name}.sample")
        try:
            out = self.sampler(fresh_copy(data), size, rng)
        except (Exception, SystemExit) as exc:  # a black box may raise anything, even exit; name it in one sentence
            raise MechanismError(f"Mechanism '{self.name}' raised {type(exc).__name__}: {_detail(exc)}.") from exc
        return check_outputs(self.name, out, size)

    def with_claim(self, epsilon: float | None = None, delta: float | None = None) -> "Mechanism":
        """Return a copy whose claim is overridden (the mechanism itself is unchanged)."""
        claim = Claim(
            self.claim.epsilon if epsilon is None else epsilon,
            self.claim.delta if delta is None else delta,
            self.claim.relation,
        )
        return dataclasses.replace(self, claim=claim)


def _detail(exc: BaseException) -> str:
    """Return an exception's message without its full stop, or what its type means when it has none."""
    if str(exc).strip():
        return str(exc).strip().rstrip(".")
    if isinstance(exc, MemoryError):
        return "it ran out of memory (fewer outputs per call, or smaller outputs, may help)"
    return "no message"


def fresh_copy(data: Any) -> Any:
    """Return a copy of `data` that shares nothing with it, so a mechanism that writes to its input changes only the copy."""
    if isinstance(data, np.ndarray):
        return data.copy()
    return copy.deepcopy(data)


def _as_dataset(data: Any, name: str) -> Any:
    """Return `data` as the mechanism will see it: a data frame or a dict of columns as given, else a numpy array.

    Raises `InvalidParameterError` naming it when it cannot be an array.
    """
    if isinstance(data, Mapping) or (hasattr(data, "to_numpy") and hasattr(data, "columns")):
        return data
    try:
        arr = np.asarray(data)
    except ValueError as exc:
        raise InvalidParameterError(f"The dataset '{name}' is ragged and cannot be an array ({exc}).") from exc
    if arr.ndim == 0:
        arr = arr.reshape(1)
    return arr


def check_pair(mech: Mechanism, d0: Any, d1: Any) -> tuple[Any, Any]:
    """Return (d0, d1) as the mechanism will see them (`_as_dataset`) after checking that they are neighbours for `mech`.

    Tables (data frames, dicts of columns, structured arrays) are compared
    by column name (`dpaudit.mechanisms.datasets`); `not_neighbours` says
    how; `neighbours.unchecked` skips every check.

    Raises:
        InvalidParameterError: one sentence naming why they are not neighbours.
    """
    a, b = _as_dataset(d0, "d0"), _as_dataset(d1, "d1")
    if mech.neighbours is unchecked:
        return a, b
    try:
        ra, rb = records_of_pair(a, b)
    except ValueError as exc:
        raise InvalidParameterError(f"d0 and d1 cannot be compared record by record for '{mech.name}': {exc}.") from exc
    reason = not_neighbours(mech, ra, rb)
    if reason:
        raise InvalidParameterError(f"d0 and d1 are not neighbours for '{mech.name}': {reason}.")
    return a, b


def not_neighbours(mech: Mechanism, d0: np.ndarray, d1: np.ndarray) -> str | None:
    """Return None when the arrays of records d0, d1 are neighbours for `mech`, else a sentence saying why not.

    Without a check of its own: the definition of its claim's relation
    (`dpaudit.mechanisms.neighbours.by_relation`, with its declared null
    record). A check of its own sees pairs of one length only: (d0, d1)
    when they have one length; when one holds one record more (add-remove),
    dpaudit checks that one is the other with a record inserted, and the
    check sees each dataset against itself, which vouches for its records.
    A check marked `neighbours.any_length` (a group's) sees every pair itself.
    The declared domain (`records`, else the check's own) is checked first,
    whatever the lengths: a record outside it is refused by name
    (`neighbours.in_domain`).

    Raises:
        NeighbourAnswerError: when the check answers neither a bool, None nor a sentence.
    """
    check = mech.neighbours
    if check is unchecked:
        return None
    outside = in_domain(mech.records or domain_of(check), d0, d1, mech.null_record)
    if outside:
        return outside
    if check is None:
        return by_relation(mech.claim.relation.value, mech.null_record)(d0, d1)
    if d0.shape[1:] != d1.shape[1:]:
        return f"their records have different shapes ({d0.shape[1:]} and {d1.shape[1:]})"
    if len(d0) == len(d1) or sees_any_length(check):
        return answer_of(check, d0, d1, mech.name)
    if mech.claim.relation is Relation.REPLACE_ONE:
        return f"under replace-one they must have the same length; they have {len(d0)} and {len(d1)} records"
    return inserted(d0, d1) or answer_of(check, d0, d0, mech.name) or answer_of(check, d1, d1, mech.name)
