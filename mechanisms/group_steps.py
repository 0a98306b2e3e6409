"""How many neighbouring steps apart two datasets are, under a mechanism's own relation: the check of `group(mech, k)`.

Group privacy (Dwork & Roth, Thm 2.2; Vadhan, "The Complexity of
Differential Privacy", Lemma 2.2) bounds datasets joined by a path of k
neighbouring pairs of the inner mechanism, so the check of a group counts
the fewest steps of that relation from one dataset to the other:

- replace-one: one step replaces one record in place (the inner mechanism's
  check, or its relation's definition, must accept each step);
- add-remove: one step inserts or removes one record, or replaces one in
  place where the inner relation accepts that as one step (its definition
  does when the declared null record is on one side); any other
  replacement is two steps, a removal then an insertion.

The count is the edit distance under those costs (they obey the triangle
inequality, so the dynamic programme's alignment is a shortest path); it is
computed inside a band of width k, since each step costs at least one.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from dpaudit.mechanisms.base import Mechanism, Relation, not_neighbours
from dpaudit.mechanisms.neighbours import NeighbourCheck, any_length, declare, domain_of, equal_rows, is_null, unchecked

__all__ = ["group_check"]


def group_check(mech: Mechanism, k: int) -> NeighbourCheck:
    """Return the check of datasets at most k steps of `mech`'s relation apart (pairs of any lengths).

    Each dataset must pass `mech`'s own check against itself (its records are
    records `mech` takes; the check carries `mech`'s declared domain, so a
    record outside it is named first); then the fewest steps between them must be at
    most k. Sound for group privacy as long as each counted step is a pair
    `mech` accepts: an in-place replacement counts as one step only when
    `mech`'s check (or its relation's definition) accepts it.
    """
    if mech.neighbours is unchecked:
        return unchecked

    def check(a: np.ndarray, b: np.ndarray) -> Optional[str]:
        if a.shape[1:] != b.shape[1:]:
            return f"their records have different shapes ({a.shape[1:]} and {b.shape[1:]})"
        for d in (a, b):
            reason = not_neighbours(mech, d, d)
            if reason:
                return reason
        if mech.claim.relation is Relation.REPLACE_ONE and len(a) != len(b):
            return f"under replace-one they must have the same length; they have {len(a)} and {len(b)} records"
        return _within(mech, a, b, k)

    return declare(any_length(check), domain_of(mech.neighbours) or mech.records)


def _within(mech: Mechanism, a: np.ndarray, b: np.ndarray, k: int) -> Optional[str]:
    """Return None when a and b are at most k steps apart, else a sentence saying how far."""
    relation = mech.claim.relation.value
    same_length = len(a) == len(b)
    in_place = _in_place_steps(mech, a, b) if same_length else None
    if isinstance(in_place, str) and mech.claim.relation is Relation.REPLACE_ONE:
        return in_place
    steps = in_place if isinstance(in_place, int) else k + 1
    if steps > k and mech.claim.relation is Relation.ADD_REMOVE:
        steps = min(steps, _edit_steps(mech, a, b, k))
    if steps > k:
        return f"they are more than {k} {relation} steps apart (the group size is {k})"
    return None


def _in_place_steps(mech: Mechanism, a: np.ndarray, b: np.ndarray) -> int | str:
    """Return the steps of the walk that replaces a's differing records by b's in place, one at a time.

    A replacement `mech` accepts is one step; under add-remove one it
    refuses is two (a removal, then an insertion); under replace-one the
    refusal's sentence is returned.
    """
    steps, current = 0, a
    for j in np.flatnonzero(~equal_rows(a, b)):
        following = current.copy()
        following[j] = b[j]
        reason = not_neighbours(mech, current, following)
        if reason and mech.claim.relation is Relation.REPLACE_ONE:
            return reason
        steps += 2 if reason else 1
        current = following
    return steps


def _edit_steps(mech: Mechanism, a: np.ndarray, b: np.ndarray, k: int) -> int:
    """Return the add-remove edit distance between a and b when it is at most k, else k + 1.

    Insertions and removals cost one step; an in-place replacement costs one
    when the relation's definition accepts it (the declared null record on
    one side) and two otherwise. Common leading and trailing records are
    skipped; the rest is a dynamic programme in a band of width k.
    """
    a, b = _trimmed(a, b)
    if abs(len(a) - len(b)) > k:
        return k + 1
    null_a, null_b = _null_flags(mech, a), _null_flags(mech, b)
    far = k + 1
    previous = {j: j for j in range(min(len(b), k) + 1)}
    for i in range(1, len(a) + 1):
        low, high = max(0, i - k), min(len(b), i + k)
        first = max(0, low - 1)
        same = equal_rows(np.repeat(a[i - 1:i], max(high - first, 0), axis=0), b[first:high])
        row: dict[int, int] = {}
        for j in range(low, high + 1):
            best = previous.get(j, far) + 1
            if j > low:
                best = min(best, row[j - 1] + 1)
            if j > 0:
                replace = 0 if same[j - 1 - first] else (1 if null_a[i - 1] or null_b[j - 1] else 2)
                best = min(best, previous.get(j - 1, far) + replace)
            row[j] = min(best, far)
        previous = row
    return previous.get(len(b), far)


def _trimmed(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return a and b without the records they share at the start and at the end (in order)."""
    shortest = min(len(a), len(b))
    head = int(np.argmin(np.append(equal_rows(a[:shortest], b[:shortest]), False)))
    a, b = a[head:], b[head:]
    shortest = min(len(a), len(b))
    tail_same = equal_rows(a[len(a) - shortest:], b[len(b) - shortest:])[::-1]
    tail = int(np.argmin(np.append(tail_same, False)))
    return a[:len(a) - tail], b[:len(b) - tail]


def _null_flags(mech: Mechanism, d: np.ndarray) -> np.ndarray:
    """Return, per record of d, whether it is `mech`'s declared null record under its relation's definition."""
    if mech.neighbours is not None or mech.null_record is None:
        return np.zeros(len(d), dtype=bool)
    return np.array([is_null(record, mech.null_record) for record in d], dtype=bool)
