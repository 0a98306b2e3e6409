"""Neighbour checks: each answers True or None for a neighbouring pair, else False or a sentence saying why not.

A check sees two arrays of records of one length (`dpaudit.mechanisms.base.not_neighbours`
says which pairs reach it); `by_relation` is the check of a relation's
definition, used when a mechanism has none of its own. A check built from
a declared domain (`dpaudit.mechanisms.records`) first refuses any record
outside it, naming the record (NaN, ±inf, a number out of range, text, a
pair of numbers where a record is a number), and carries that domain
(`domain_of`), so a transform that wraps the check can keep it (`declare`).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Union

import numpy as np
from dpaudit.errors import MechanismError, NeighbourAnswerError
from dpaudit.mechanisms.records import CategoryRecords, Domain, NumberRecords

__all__ = [
    "NeighbourCheck",
    "answer_of",
    "answers_within",
    "any_length",
    "as_rows",
    "by_relation",
    "categories_in",
    "declare",
    "domain_of",
    "in_domain",
    "equal_rows",
    "inserted",
    "inserted_at",
    "is_local",
    "is_null",
    "sees_any_length",
    "local",
    "of_length",
    "records_in",
    "unchecked",
    "within",
]

NeighbourCheck = Callable[[np.ndarray, np.ndarray], Union[Optional[str], bool]]
"""`check(d0, d1)`: True or None when the arrays of records d0, d1 are neighbours, else False or a sentence saying why not."""


def local(check: NeighbourCheck) -> NeighbourCheck:
    """Return `check` marked local: its answer reads each record alone and the records that differ, nothing else.

    On two datasets that hold the same records but in one slot, a local
    check answers as it does on that slot alone, once every other record
    has passed it; so a game with m canaries checks each canary's slot
    alone and the whole dataset once, instead of m whole pairs
    (`dpaudit.attacks.canary.require_neighbours`). Only dpaudit's own checks
    are marked: a user's check may read anything (a length, a sum).
    """
    check.local = True  # type: ignore[attr-defined]
    return check


def is_local(check: NeighbourCheck | None) -> bool:
    """Return True for the relation's definition (None), `unchecked` and the checks marked `local`."""
    return check is None or check is unchecked or getattr(check, "local", False)


def any_length(check: NeighbourCheck) -> NeighbourCheck:
    """Return `check` marked as answering pairs of any lengths itself (a group's check: k records may be added).

    Other checks see pairs of one length only (`dpaudit.mechanisms.base.not_neighbours`).
    """
    check.any_length = True  # type: ignore[attr-defined]
    return check


def sees_any_length(check: NeighbourCheck | None) -> bool:
    """Return True for a check marked by `any_length`."""
    return getattr(check, "any_length", False)


def declare(check: NeighbourCheck, domain: Domain | None) -> NeighbourCheck:
    """Return `check` carrying `domain`, the records it admits (`domain_of` reads it); None declares nothing."""
    if domain is not None:
        check.domain = domain  # type: ignore[attr-defined]
    return check


def domain_of(check: NeighbourCheck | None) -> Domain | None:
    """Return the domain a check declares (its records' set, shape and type), or None when it declares none."""
    return getattr(check, "domain", None)


def in_domain(domain: Domain | None, d0: np.ndarray, d1: np.ndarray, null_record: Any = None) -> Optional[str]:
    """Return None when every record of d0 and d1 lies in `domain` (the null record too), else the sentence naming the first that does not.

    None as the domain admits every record.
    """
    if domain is None:
        return None
    return domain.check_records(d0, "d0", null_record=null_record) or domain.check_records(d1, "d1", null_record=null_record)


def within(domain: Domain, *, max_changed: int = 1, null_record: Any = None) -> NeighbourCheck:
    """Return a check: every record in `domain` (or `null_record`) and at most `max_changed` of them differ.

    Add/remove is modelled by replacing a record with a null record, so the
    datasets keep one length; the domain bounds what one changed record can
    do (a sum of records in [0, Δ] moves by at most Δ).
    """

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        outside = in_domain(domain, d0, d1, null_record)
        if outside:
            return outside
        changed = int(np.count_nonzero(~equal_rows(d0, d1)))
        if changed > max_changed:
            return f"they differ in {changed} records, more than {max_changed}"
        return None

    return declare(local(check), domain)


def records_in(low: float, high: float, *, max_changed: int = 1, integer: bool = False) -> NeighbourCheck:
    """Return a check: records are numbers (whole numbers when `integer`) in [low, high], and at most `max_changed` differ.

    NaN and ±inf are refused, and so is a record that is not one number.
    Add/remove is modelled by replacing a record with a null record (0), so the
    datasets keep one length.
    """
    return within(NumberRecords(low, high, integer=integer), max_changed=max_changed)


def answers_within(sensitivity: float, *, norm: float = np.inf) -> NeighbourCheck:
    """Return a check for query-answer vectors (one finite number per query): ‖d0 − d1‖_norm ≤ sensitivity (StatDP's convention).

    It sees pairs of any lengths (`any_length`) and refuses two lengths: an
    added answer is another query, not a neighbour, whatever the relation.
    """
    domain = NumberRecords()

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        outside = in_domain(domain, d0, d1)
        if outside:
            return outside.replace("records are", "query answers are")
        if len(d0) != len(d1):
            return f"they must answer the same queries; they hold {len(d0)} and {len(d1)} answers"
        dist = float(np.linalg.norm((d0 - d1).ravel().astype(float), ord=norm))
        if dist > sensitivity + 1e-12:
            return f"their answers differ by {dist:g} in ℓ{norm:g} norm, more than the sensitivity {sensitivity:g}"
        return None

    return declare(any_length(local(check)), domain)


def categories_in(num_categories: int, *, max_changed: int = 1) -> NeighbourCheck:
    """Return a check: records are integers in [0, num_categories) and at most `max_changed` differ."""
    return within(CategoryRecords(num_categories), max_changed=max_changed)


def of_length(length: int, check: NeighbourCheck) -> NeighbourCheck:
    """Return `check` that also requires both datasets to hold exactly `length` records.

    For mechanisms whose noise is calibrated to a public record count.
    """

    def checked(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        if len(d0) != length:
            return f"the noise is calibrated to {length} records, and the datasets have {len(d0)}"
        return check(d0, d1)

    return declare(checked, domain_of(check))


def unchecked(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
    """Accept any pair: the caller vouches that d0 and d1 are neighbours (`blackbox(..., neighbours=unchecked)`).

    An audit of a pair that is not neighbouring proves nothing about the
    claim: its `violation` may be false.
    """
    return None


def answer_of(check: NeighbourCheck, d0: np.ndarray, d1: np.ndarray, owner: str) -> Optional[str]:
    """Return None when `check` answers that (d0, d1) are neighbours, else the sentence saying why not.

    A check answers True or None (neighbours), False (not neighbours) or a
    sentence saying why not; numpy booleans count as booleans.

    Raises:
        NeighbourAnswerError: (a `TypeError`) for any other answer.
        MechanismError: when the check raises.
    """
    try:
        said = check(d0, d1)
    except Exception as exc:  # a user's check may raise anything: one sentence
        raise MechanismError(f"The neighbour check of '{owner}' raised {type(exc).__name__}: {exc}.") from exc
    if said is None or said is True or (isinstance(said, np.bool_) and bool(said)):
        return None
    if said is False or isinstance(said, np.bool_):
        return "its neighbour check answered False"
    if isinstance(said, str):
        return said.strip().rstrip(".") or "its neighbour check gave an empty reason"
    raise NeighbourAnswerError(
        f"The neighbour check of '{owner}' must answer True/False, None or a sentence; it answered "
        f"{type(said).__name__} {said!r:.40}."
    )


def by_relation(relation: str, null_record: Any = None, records: Domain | None = None) -> NeighbourCheck:
    """Return the check of `relation` ("replace-one" or "add-remove") on arrays of records (first axis).

    With `records` (a declared domain), every record must lie in it or be
    the null record (`in_domain`); the check then carries it (`domain_of`).

    Replace-one: same length, at most one record differs. Add-remove: one
    dataset is the other with one record inserted; datasets of one length
    are neighbours only when a `null_record` (one that adds nothing, such as
    0 for a sum) is declared and the one differing record is null in one of
    them. Without one, equal-length datasets that differ in a record are a
    replacement, two add-remove steps, and are refused.
    """

    def check(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
        outside = in_domain(records, d0, d1, null_record)
        if outside:
            return outside
        if len(d0) != len(d1):
            if relation == "replace-one":
                return f"under replace-one they must have the same length; they have {len(d0)} and {len(d1)} records"
            return inserted(d0, d1)
        changed = np.flatnonzero(~equal_rows(d0, d1))
        if changed.size > 1:
            return f"they differ in {changed.size} records, more than 1"
        if relation == "replace-one" or not changed.size:
            return None
        return _null_in_one(d0[changed[0]], d1[changed[0]], null_record)

    return declare(local(check), records)


def _null_in_one(a: Any, b: Any, null_record: Any) -> Optional[str]:
    """Return None when record a or b is the null record, else why an equal-length add-remove pair is refused."""
    if null_record is None:
        return (
            "under add-remove one must hold one record more than the other, and these have one length, so a record "
            "was replaced (two add-remove steps); pass one dataset with one record more, or relation='replace-one', "
            "or declare the record that adds nothing with blackbox(..., null_record=...)"
        )
    if is_null(a, null_record) or is_null(b, null_record):
        return None
    return (
        f"under add-remove one must hold one record more than the other, or the changed record must be the "
        f"null record {null_record!r} in one of them; for a replaced record, pass relation='replace-one'"
    )


def as_rows(d: np.ndarray) -> np.ndarray:
    """Return the records of `d` as rows of a 2-D array (one row per record, even for no records)."""
    return d.reshape(len(d), int(np.prod(d.shape[1:], dtype=int)))


def equal_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return, per record, whether a and b hold the same record (NaN equal to NaN)."""
    a, b = as_rows(a), as_rows(b)
    if a.dtype != b.dtype:
        a, b = a.astype(object), b.astype(object)
    same = np.asarray(a == b, dtype=bool) | (np.asarray(a != a, dtype=bool) & np.asarray(b != b, dtype=bool))
    return np.all(same, axis=1)


def is_null(record: Any, null_record: Any) -> bool:
    """Return True when `record` is `null_record` (a value every entry has, or a whole record; NaN equals NaN)."""
    values = np.asarray(record, dtype=object).ravel().tolist()
    null = np.asarray(null_record, dtype=object).ravel().tolist()
    if len(null) not in (1, len(values)):
        return False
    null = null * len(values) if len(null) == 1 else null
    return all(v == n or (v != v and n != n) for v, n in zip(values, null))


def inserted(d0: np.ndarray, d1: np.ndarray) -> Optional[str]:
    """Return None when one of d0, d1 is the other with one record inserted (the rest in order), else why not."""
    long, short = (d0, d1) if len(d0) > len(d1) else (d1, d0)
    if len(long) - len(short) != 1:
        return f"under add-remove they must differ by one record; they have {len(d0)} and {len(d1)} records"
    if long.shape[1:] != short.shape[1:]:
        return "their records have different shapes"
    return None if inserted_at(long, short) is not None else (
        "one must be the other with one record added or removed, the others in the same order")


def inserted_at(long: np.ndarray, short: np.ndarray) -> int | None:
    """Return the index of the record `long` holds beyond `short` (the others equal and in order), else None."""
    first = int(np.argmin(np.append(equal_rows(long[:-1], short), False)))
    return first if np.all(equal_rows(long[first + 1:], short[first:])) else None
