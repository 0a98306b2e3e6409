"""Neighbours a bug hunter would try, generated from what a mechanism declares: never chosen per bug.

From the mechanism's declared domain (`mech.records`, else the domain its
neighbour check carries), the bounds among its parameters (`low`/`high`,
`lower`/`upper`, `bounds`, `range`) and a base dataset (given, else the
smaller dataset of its default pair), `candidate_pairs` builds the pairs
that break implementations rather than proofs:

- "bounds": a record at each declared bound, just inside it (the next
  double, or the next integer) and beyond it (the next one out, and one
  a bound's width further);
- "non-finite": NaN, +inf and −inf;
- "magnitude": huge (the largest double, 2⁶² for integers, 2⁵³ + 1) and
  tiny (the smallest subnormal, the smallest normal, −0.0) numbers;
- "new-category": a category, label or text no record of the base has;
- "small": the empty and one-record datasets, and a record (drawn) removed;
- "rounding": the floating-point datasets of Casacuberta, Shoemate,
  Vadhan and Wagaman ("Widespread underestimation of sensitivity in
  differentially private libraries and how to fix it", CCS 2022), built
  by `dpaudit.attacks.rounding_datasets` from the bounds alone: many
  records near a power of two and one record that changes how the sum
  rounds, and the same records in another order. Bounds around 0: many
  records just above half an ulp of U, and U first or last. Bounds away
  from 0 (say [2⁵⁰, 2⁵⁰ + 1]): as many records as the base one ulp inside
  the bound nearer 0, one of them at a neighbouring double; and the
  datasets of k records at one of these doubles then the rest at another,
  one changed, on which a float sum taken in order moves most beyond what
  one record can move the real sum;
- "filled": datasets whose other records all hold one value a bug hunter
  fills a dataset with (NaN, +inf, −inf, a bound, the declared null
  record), as many as the base has: under replace-one one record moved
  between two of these values, under add-remove a record of each value
  added. A missing-value tool that averages the values present but
  calibrates to the count of all, a sum whose records all sit at a bound,
  a model fit on one real row: failures that a single record edited into
  an ordinary base never shows.

Each record is played under the claim's relation: inserted (and, where a
null record is declared, in the slot of a null record) under add-remove,
replacing the base's first record under replace-one; a record of several
entries is tried with the value in every entry and in one column at a time.
A candidate is kept only when it passes `not_neighbours(mech, d0, d1)`: a
record outside the declared domain (NaN where only numbers are records, a
record beyond a bound the domain states) is refused there and dropped, so
the candidates are neighbours of the claim whatever a generator proposes.
Tables (data frames, dicts of columns, structured arrays) come back as
tables of the base's columns. A "filled" candidate equal to an earlier one
(the same two datasets) is dropped. Generating reads no output of the mechanism.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping
from typing import Any, Iterable, Sequence

import numpy as np
from dpaudit.attacks.rounding_datasets import ROUNDING_RECORDS, rounding_datasets
from dpaudit.errors import InvalidParameterError, MechanismError
from dpaudit.mechanisms.base import Mechanism, Relation, not_neighbours
from dpaudit.mechanisms.datasets import column_names, records, records_of_pair
from dpaudit.mechanisms.neighbours import domain_of
from dpaudit.mechanisms.records import CategoryRecords, Domain, VectorRecords

__all__ = ["KINDS", "ROUNDING_RECORDS", "CandidatePair", "candidate_pairs", "neighbouring"]

KINDS = ("bounds", "non-finite", "magnitude", "new-category", "small", "rounding", "filled")
"""The kinds of candidates, in the order they are generated."""
BASE_RECORDS = 4
"""The records of the base built from a domain when the mechanism has no default pair."""
COLUMNS_TRIED = 4
"""A record of several entries is varied in its first COLUMNS_TRIED columns and its last one."""
UNSEEN_LABEL = "dpaudit-unseen"
PARAMETER_BOUNDS = (("low", "high"), ("lower", "upper"), ("bounds",), ("range",))


@dataclasses.dataclass(frozen=True)
class CandidatePair:
    """A generated neighbouring pair: its kind (one of `KINDS`), the datasets, and a note saying what changes."""

    kind: str
    d0: Any
    d1: Any
    note: str


@dataclasses.dataclass(frozen=True)
class _Setting:
    """What the generators read: the base as rows (one flat row per record), its record shape, and the declaration."""

    rows: np.ndarray
    shape: tuple[int, ...]
    template: Any
    domain: Domain | None
    bounds: tuple[float, float]
    add_remove: bool
    null: Any

    def reference(self) -> np.ndarray:
        """Return the row every varied record starts from: the base's first, else one inside the domain."""
        return self.rows[0].copy() if len(self.rows) else _inside_row(self)

    def dataset(self, rows: Sequence[np.ndarray]) -> Any:
        """Return `rows` as a dataset of the base's kind (array of its record shape, or table of its columns)."""
        flat = _stack(rows) if len(rows) else np.empty((0, self.rows.shape[1]), dtype=self.rows.dtype)
        arr = flat.reshape((len(flat), *self.shape))
        return _like(self.template, arr) if column_names(self.template) is not None else arr


def _stack(rows: Sequence[np.ndarray]) -> np.ndarray:
    """Return rows stacked into one array: numbers in their common type, anything with text as objects."""
    if any(row.dtype.kind in "OUS" for row in rows):
        return np.array([row.astype(object) for row in rows], dtype=object)
    return np.stack(rows)


def candidate_pairs(mech: Mechanism, *, base: Any = None, rng: np.random.Generator,
                    kinds: Iterable[str] | None = None) -> list[CandidatePair]:
    """Return the generated pairs of `kinds` (default: all of `KINDS`) that are neighbours for `mech`.

    `base` is the dataset the records are inserted into or replace (default:
    the smaller dataset of the default pair, else `BASE_RECORDS` records
    inside the declared domain). `rng` draws which base record is removed
    ("small"); nothing else is drawn, and nothing reads the mechanism's
    outputs, so the candidates are fixed before any game. Sound as a source of
    candidates whatever it proposes: every pair returned passes
    `not_neighbours`, the check the audit itself applies. A "filled" pair
    equal to an earlier one is left out (the other kinds are as generated).

    Raises:
        InvalidParameterError: on an unknown kind, or when there is neither a base, a default pair nor a declared domain.
    """
    wanted = tuple(KINDS if kinds is None else kinds)
    unknown = [k for k in wanted if k not in KINDS]
    if unknown:
        raise InvalidParameterError(f"The 'kinds' of candidate_pairs must be among {', '.join(KINDS)}; got {unknown[0]!r}.")
    setting = _setting(mech, base)
    makers = {"small": lambda: _small_pairs(setting, rng), "rounding": lambda: _rounding_pairs(setting),
              "filled": lambda: _filled_pairs(setting)}
    found, seen = [], set()
    for kind in wanted:
        for c in makers[kind]() if kind in makers else _record_pairs(setting, kind):
            if neighbouring(mech, c.d0, c.d1) and (kind != "filled" or _identity(c) not in seen):
                seen.add(_identity(c))
                found.append(c)
    return found


def _identity(candidate: CandidatePair) -> tuple[str, ...]:
    """Return what tells two candidates apart: the text of their records (NaN equal to NaN, −0.0 apart from 0.0)."""
    return tuple(repr(records(d).tolist()) for d in (candidate.d0, candidate.d1))


def neighbouring(mech: Mechanism, d0: Any, d1: Any) -> bool:
    """Return True for neighbours for `mech`: `not_neighbours` on their records, tables compared by column name.

    Datasets that cannot be compared record by record, and pairs on which a
    user's neighbour check raises, are not neighbours.
    """
    try:
        a, b = records_of_pair(d0, d1)
        return a.shape[1:] == b.shape[1:] and not_neighbours(mech, a, b) is None
    except (ValueError, MechanismError):
        return False


# ---- the setting


def _setting(mech: Mechanism, base: Any) -> _Setting:
    """Return the setting of `mech`: its base as rows, its domain, its numbers' bounds, its relation and null record."""
    domain = mech.records or domain_of(mech.neighbours)
    template = base if base is not None else _default_base(mech, domain)
    arr = records(template)
    width = getattr(domain, "width", None)
    if arr.ndim == 1 and not len(arr) and width is not None and width > 1:
        arr = arr.reshape(0, width)
    shape = arr.shape[1:]
    rows = arr.reshape(len(arr), int(np.prod(shape, dtype=int)))
    return _Setting(rows=rows, shape=shape, template=template, domain=domain, bounds=_bounds(mech, domain),
                    add_remove=mech.claim.relation is Relation.ADD_REMOVE and not _one_length(mech), null=mech.null_record)


def _one_length(mech: Mechanism) -> bool:
    """Return True when the mechanism's own check and default pair say its neighbours have one length, with no null record.

    Query-answer vectors, say: an add-remove claim whose default pair is two
    datasets of one length, accepted without a null record, is about changed
    records, never added ones; the hunt then replaces records under add-remove too.
    """
    pair = mech.default_pair
    return (mech.neighbours is not None and mech.null_record is None and pair is not None
            and len(records(pair[0])) == len(records(pair[1])))


def _default_base(mech: Mechanism, domain: Domain | None) -> Any:
    """Return the smaller dataset of the default pair, else `BASE_RECORDS` records inside `domain`."""
    if mech.default_pair is not None:
        d0, d1 = mech.default_pair
        return d1 if len(records(d1)) < len(records(d0)) else d0
    width = getattr(domain, "width", 1) if not isinstance(domain, CategoryRecords) else 1
    if domain is None or width is None:
        raise InvalidParameterError(
            f"Mechanism '{mech.name}' has no default pair and declares no record width to build candidates from; "
            "pass base=, or give it a default pair or records=."
        )
    if isinstance(domain, CategoryRecords):
        return np.arange(BASE_RECORDS) % domain.count
    low, high = (getattr(domain, "low", -math.inf), getattr(domain, "high", math.inf))
    middle = 0.0 if not math.isfinite(low + high) else (low + high) / 2
    middle = min(max(middle, low), high)
    return np.full((BASE_RECORDS, width) if width > 1 else BASE_RECORDS, middle)


def _bounds(mech: Mechanism, domain: Domain | None) -> tuple[float, float]:
    """Return the bounds of a record's numbers: the domain's where finite, else the first pair among its parameters."""
    if isinstance(domain, CategoryRecords):
        return 0.0, float(domain.count - 1)
    low, high = getattr(domain, "low", -math.inf), getattr(domain, "high", math.inf)
    if math.isfinite(low) and math.isfinite(high):
        return low, high
    for keys in PARAMETER_BOUNDS:
        values = [mech.params.get(k) for k in keys]
        pair = values if len(keys) == 2 else (list(values[0]) if isinstance(values[0], (list, tuple)) else [])
        if len(pair) == 2 and all(isinstance(v, (int, float)) and math.isfinite(v) for v in pair) and pair[0] < pair[1]:
            return max(low, float(pair[0])), min(high, float(pair[1]))
    return low, high


def _inside_row(setting: _Setting) -> np.ndarray:
    """Return a row inside the bounds (their middle, or 0), of the base's width and numeric type."""
    low, high = setting.bounds
    middle = 0.0 if not math.isfinite(low + high) else (low + high) / 2
    value = min(max(middle, low), high)
    if setting.rows.dtype.kind in "iu":
        value = math.ceil(value)
    return np.full(setting.rows.shape[1], value, dtype=setting.rows.dtype if setting.rows.dtype.kind in "iuf" else float)


def _integer(setting: _Setting, column: np.ndarray) -> bool:
    """Return True when a column's records are integers: an integer domain, or integer-typed base values."""
    if isinstance(setting.domain, CategoryRecords) or getattr(setting.domain, "integer", False):
        return True
    return column.dtype.kind in "iu"


def _numeric(column: np.ndarray) -> bool:
    """Return True when every value of a column is a real number (not text, not a bool)."""
    if column.dtype.kind in "iuf":
        return True
    return all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in column.tolist())


# ---- records: bounds, non-finite, magnitudes, new categories


def _values(setting: _Setting, kind: str, column: np.ndarray) -> list[tuple[str, Any]]:
    """Return the (note, value) of `kind` for one column of records, as a bug hunter would try them."""
    if not _numeric(column):
        return [("a text no record has", _unseen(column)), ("an empty text", "")] if kind == "new-category" else []
    integer = _integer(setting, column)
    if kind == "bounds":
        return _bound_values(*setting.bounds, integer)
    if kind == "non-finite":
        return [("NaN", math.nan), ("+inf", math.inf), ("-inf", -math.inf)]
    if kind == "magnitude":
        if integer:
            return [("2**62", 2**62), ("-2**62", -(2**62)), ("2**53 + 1", 2**53 + 1)]
        tiny = float(np.finfo(float).tiny)
        return [("the largest double", float(np.finfo(float).max)), ("minus the largest double", -float(np.finfo(float).max)),
                ("the smallest subnormal", 5e-324), ("the smallest normal", tiny), ("-0.0", -0.0), ("2**53 + 2", 2.0**53 + 2)]
    present = {float(v) for v in column.tolist()}
    if isinstance(setting.domain, VectorRecords) or not (integer or all(v.is_integer() for v in present)):
        return []  # real numbers, not labels
    start = math.ceil(setting.bounds[0]) if math.isfinite(setting.bounds[0]) else 0
    return [("a category no record has", next(v for v in range(start, start + len(present) + 1) if float(v) not in present))]


def _bound_values(low: float, high: float, integer: bool) -> list[tuple[str, float]]:
    """Return records at each finite bound, just inside it, just beyond it and a bound's width beyond it."""
    width = high - low if math.isfinite(high - low) and high > low else 1.0
    out = []
    for name, bound, inward in (("lower", low, 1.0), ("upper", high, -1.0)):
        if not math.isfinite(bound):
            continue
        if integer:
            near_in, near_out = bound + inward, bound - inward
        else:
            near_in, near_out = math.nextafter(bound, inward * math.inf), math.nextafter(bound, -inward * math.inf)
        far = bound - inward * width
        far = math.ceil(far) if integer and inward > 0 else math.floor(far) if integer else far
        out += [(f"at the {name} bound {bound:g}", bound), (f"just inside the {name} bound", near_in),
                (f"just beyond the {name} bound", near_out), (f"a bound's width beyond the {name} bound", far)]
    return [(note, int(v) if integer else float(v)) for note, v in out]


def _unseen(column: np.ndarray) -> str:
    """Return a text that no value of `column` is."""
    present = {str(v) for v in column.tolist()}
    return next(f"{UNSEEN_LABEL}-{i}" if i else UNSEEN_LABEL for i in range(len(present) + 1)
                if (f"{UNSEEN_LABEL}-{i}" if i else UNSEEN_LABEL) not in present)


def _vector_values(setting: _Setting, kind: str) -> list[tuple[str, np.ndarray]]:
    """Return whole vector records of `kind` for `VectorRecords`: at, just inside and beyond the clip norm."""
    domain, width = setting.domain, setting.rows.shape[1]
    if kind != "bounds" or not isinstance(domain, VectorRecords) or width < 1:
        return []
    unit, dense = np.eye(width)[0], np.full(width, 1.0 / math.sqrt(width))
    norm = domain.norm
    return [("at the clip norm, one entry", norm * unit), ("at the clip norm, every entry", norm * dense),
            ("just inside the clip norm", math.nextafter(norm, 0.0) * unit),
            ("just beyond the clip norm", math.nextafter(norm, math.inf) * unit), ("twice the clip norm", 2 * norm * unit)]


def _records(setting: _Setting, kind: str) -> list[tuple[str, np.ndarray]]:
    """Return the (note, row) of `kind`: each value in every entry (numbers alike) and in one column at a time."""
    ref, width = setting.reference(), setting.rows.shape[1]
    found = list(_vector_values(setting, kind))
    columns = sorted(set(range(min(width, COLUMNS_TRIED))) | {width - 1}) if width else []
    for j in columns:
        column = setting.rows[:, j] if len(setting.rows) else ref[j:j + 1]
        for note, value in _values(setting, kind, column):
            if width > 1:
                found.append((f"{note} in column {j}", _with(ref, [j], value)))
            if j == 0 and (width == 1 or kind != "new-category" and all(_numeric(setting.rows[:, i]) for i in range(width))):
                found.append((note if width == 1 else f"{note} in every entry", _with(ref, range(width), value)))
    return found


def _with(ref: np.ndarray, entries: Iterable[int], value: Any) -> np.ndarray:
    """Return a copy of row `ref` with `value` in `entries`, in a type that holds both (objects for text among numbers)."""
    kind = np.asarray(value).dtype
    dtype = object if ref.dtype == object or kind.kind in "US" else np.result_type(ref.dtype, kind)
    row = ref.astype(dtype)
    for j in entries:
        row[j] = value
    return row


def _record_pairs(setting: _Setting, kind: str) -> list[CandidatePair]:
    """Return each record of `kind` played under the relation (inserted, in a null slot, or replacing record 0)."""
    base, out = list(setting.rows), []
    for note, row in _records(setting, kind):
        for what, d0, d1 in _placements(setting, base, row):
            out.append(CandidatePair(kind, setting.dataset(d0), setting.dataset(d1), f"{note}, {what}"))
    return out


def _placements(setting: _Setting, base: list[np.ndarray], row: np.ndarray) -> list[tuple[str, list, list]]:
    """Return (what, d0 rows, d1 rows) for one record: inserted last (and into a null slot), or replacing record 0."""
    if not setting.add_remove:
        return [("replacing record 0", base, [row] + base[1:])] if base else []
    out = [("inserted last", base, base + [row])]
    if setting.null is not None:
        out.append(("in place of a null record", base + [_null_row(setting, row)], base + [row]))
    return out


def _null_row(setting: _Setting, like: np.ndarray) -> np.ndarray:
    """Return the declared null record as a row of the base's width."""
    null = np.asarray(setting.null, dtype=object).ravel().tolist()
    values = null * like.size if len(null) == 1 else null
    return _with(like, range(like.size), values[0]) if len(set(map(repr, values))) == 1 else np.asarray(values)


# ---- datasets: small ones and rounding


def _small_pairs(setting: _Setting, rng: np.random.Generator) -> list[CandidatePair]:
    """Return the empty and one-record datasets against a neighbour, and a record drawn by `rng` removed from the base."""
    ref, base = setting.reference(), list(setting.rows)
    others = [row for note, row in _records(setting, "bounds") if "at the" in note][:2] or [ref]
    pairs = []
    if setting.add_remove:
        pairs += [("the empty dataset against one record", [], [ref]),
                  ("one record against two", [ref], [ref, ref])]
        pairs += [(f"the empty dataset against the record {_shown(o)}", [], [o]) for o in others]
        if base:
            gone = int(rng.integers(len(base)))
            pairs.append((f"the base with its record {gone} removed", base, base[:gone] + base[gone + 1:]))
        if setting.null is not None:
            pairs.append(("one null record against one record", [_null_row(setting, ref)], [ref]))
    else:
        pairs += [(f"one record against the record {_shown(o)}", [ref], [o]) for o in others]
    return [CandidatePair("small", setting.dataset(a), setting.dataset(b), note) for note, a, b in pairs]


def _shown(row: np.ndarray) -> str:
    values = row.tolist()
    return f"{values[0]!r}" if len(values) == 1 else f"[{', '.join(repr(v) for v in values[:3])}{', …' if len(values) > 3 else ''}]"


def _rounding_pairs(setting: _Setting) -> list[CandidatePair]:
    """Return the rounding datasets of `rounding_datasets` for the records' bounds, every entry of a record alike.

    Only for float records. An offset dataset has as many records as the
    base (less its null records: a dataset of known size stays that size);
    an added record goes into a null record's slot where one is declared.
    """
    width = setting.rows.shape[1]
    if width < 1 or any(_integer(setting, setting.rows[:, j]) or not _numeric(setting.rows[:, j]) for j in range(width)):
        return []
    count = len(setting.rows) - sum(_is_null(setting, row) for row in setting.rows)
    out = []
    for pair in rounding_datasets(*setting.bounds, count=count, replace=not setting.add_remove):
        d0 = [np.full(width, v) for v in pair.d0]
        d1 = [np.full(width, v) for v in pair.d1]
        if len(d1) > len(d0) and setting.null is not None:
            d0.insert(pair.changed, _null_row(setting, d1[pair.changed]))
        out.append(CandidatePair("rounding", setting.dataset(d0), setting.dataset(d1),
                                 pair.note + (", in place of a null record" if len(d0) == len(d1) and setting.add_remove else "")))
    return out


def _fill_values(setting: _Setting) -> list[tuple[str, Any]]:
    """Return the (note, value) a dataset is filled with: NaN, ±inf, each finite bound, and a declared null record's number."""
    integer = all(_integer(setting, setting.rows[:, j]) for j in range(setting.rows.shape[1]))
    out: list[tuple[str, Any]] = [("NaN", math.nan), ("+inf", math.inf), ("-inf", -math.inf)]
    for name, bound in zip(("lower", "upper"), setting.bounds):
        if math.isfinite(bound):
            out.append((f"the {name} bound {bound:g}", int(bound) if integer else float(bound)))
    null = np.asarray(setting.null, dtype=object).ravel().tolist() if setting.null is not None else []
    if len(null) == 1 and _numeric(np.asarray(null, dtype=object)) and repr(float(null[0])) not in {repr(float(v)) for _, v in out}:
        out.append(("the null record", null[0]))
    return out


def _filled_pairs(setting: _Setting) -> list[CandidatePair]:
    """Return datasets of the base's length whose records but the changed one all hold one fill value (`_fill_values`).

    Replace-one: the first record moves between two fill values, the n − 1
    others hold a third or one of them; add-remove: n records of one value,
    a record of each value added (and in a null record's slot where one is
    declared). Only where the base has two records or more and every entry
    of a record is a number; a value goes into every entry of a record.
    """
    width, n = setting.rows.shape[1], len(setting.rows)
    if width < 1 or n < 2 or not all(_numeric(setting.rows[:, j]) for j in range(width)):
        return []
    ref, values = setting.reference(), _fill_values(setting)
    row = {note: _with(ref, range(width), value) for note, value in values}
    out = []
    for fill, _ in values:
        if setting.add_remove:
            out += [CandidatePair("filled", setting.dataset(d0), setting.dataset(d1), f"{note} {what}, {n} records at {fill}")
                    for note, _ in values for what, d0, d1 in _placements(setting, [row[fill]] * n, row[note])]
            continue
        others = [row[fill]] * (n - 1)
        out += [CandidatePair("filled", setting.dataset([row[a]] + others), setting.dataset([row[b]] + others),
                              f"record 0 at {a} replaced by {b}, the {n - 1} others at {fill}")
                for (a, _), (b, _) in itertools.combinations(values, 2)]
    return out


def _is_null(setting: _Setting, row: np.ndarray) -> bool:
    """Return True when `row` is the declared null record (NaN matching NaN)."""
    if setting.null is None:
        return False
    null = _null_row(setting, row)
    return bool(np.all([a == b or (a != a and b != b) for a, b in zip(row.tolist(), np.asarray(null).tolist())]))


def _like(template: Any, arr: np.ndarray) -> Any:
    """Return records `arr` as a table of `template`'s kind and columns (a data frame, a dict of columns, a structured array)."""
    names = column_names(template)
    columns = {name: _column_of(arr[:, j], template, name) for j, name in enumerate(names)}
    if hasattr(template, "to_numpy") and hasattr(template, "columns"):
        return type(template)(columns)
    if isinstance(template, Mapping):
        return columns
    return np.array(list(zip(*columns.values())), dtype=template.dtype) if len(arr) else np.empty(0, dtype=template.dtype)


def _column_of(values: np.ndarray, template: Any, name: str) -> np.ndarray:
    """Return one column's values in the template column's type when it holds them, else in numpy's own type for them."""
    given = np.asarray(template[name].to_numpy() if hasattr(template, "columns") else template[name])
    listed = values.tolist()
    if given.dtype.kind in "iuf" and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in listed):
        whole = given.dtype.kind in "iu" and all(float(v).is_integer() and abs(v) < 2**63 for v in listed)
        return np.asarray(listed, dtype=given.dtype if whole else np.result_type(given.dtype, *(np.asarray(v).dtype for v in listed)))
    return np.asarray(listed, dtype=object) if given.dtype == object or not listed else np.asarray(listed)
