"""Transforms: wrap any mechanism into a new one, with the event composed so theory bounds it.

- `compose(mech, k)`: k independent runs, outputs stacked (SelfComposedDpEvent).
- `subsample(mech, q)`: Poisson subsampling of the records, the others removed (PoissonSampledDpEvent).
- `shuffle(randomizer, n)`: n users' local reports in random order (ShuffledDpEvent).
- `group(mech, k)`: the same mechanism audited on datasets k steps of its relation apart (GroupDpEvent).
- `copies(mech, k)`: the mechanism run on every record copied k times, so one
  distinct record is a group of k (GroupDpEvent).

Claims are the textbook theorems applied to the inner claim (basic
composition, amplification by subsampling, group privacy); the upper bound
`dpaudit.audit.theory.upper_bound(mech.event)` is the tight one.

A replay (`dpaudit.audit.audit_replay`) reads two attributes of a sampler:
`not_replayable` (why its draws cannot be replayed) and `replay` (a library
that replays in its own environment, one call at a time). A transform keeps
a truthful answer (`_replayed`): an inner reason is kept, and so is the
law of the released noise an inner sampler declares; `group` keeps the
inner sampler and `copies` replays through it (neither draws); `compose`,
`subsample` and `shuffle` around a `replay` say why they cannot (their runs
or their own draws are not part of the library's one-call replay). An
inner sampler without either draws from the rng it is handed, as the
transform does, so the replay records both.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Optional

import numpy as np
from dpaudit.errors import InvalidParameterError
from dpaudit.mechanisms.base import Claim, Mechanism, Relation, not_neighbours
from dpaudit.mechanisms.builtins.laplace import laplace
from dpaudit.mechanisms.builtins.randomized_response import randomized_response
from dpaudit.mechanisms.datasets import column_names, record_count, select_records
from dpaudit.mechanisms.group_steps import group_check
from dpaudit.mechanisms.neighbours import any_length, declare, domain_of, equal_rows, inserted_at
from dpaudit.mechanisms.registry import register
from dpaudit.validation import check_int, check_real

__all__ = [
    "compose",
    "composed_laplace",
    "copies",
    "group",
    "group_laplace",
    "group_pair",
    "shuffle",
    "shuffled_rr",
    "subsample",
    "subsampled_laplace",
]


def _replayed(inner: Mechanism, sample: Callable[..., Any], runs: str | None) -> Callable[..., Any]:
    """Return `sample` with a truthful replay answer for a transform of `inner` (see the module).

    The inner sampler's `not_replayable` is kept. When it replays in its
    own environment (`replay`), `runs` says what the transform does beyond
    one call of it (its runs, its own draws): the sampler is then marked
    `not_replayable` with that reason; `runs` None means the transform is
    one call of it on data it fixes without drawing, and the caller gives
    `sample` its own `replay`. The law of the released noise the inner
    sampler declares (`released_noise`) is kept: each output of a transform
    is an output of `inner` (stacked, or on other records).
    """
    if hasattr(inner.sampler, "released_noise"):
        setattr(sample, "released_noise", inner.sampler.released_noise)
    why = getattr(inner.sampler, "not_replayable", None)
    if why:
        setattr(sample, "not_replayable", why)
    elif callable(getattr(inner.sampler, "replay", None)) and runs is not None:
        setattr(sample, "not_replayable", f"it wraps '{inner.name}', which replays only in its own environment one call "
                                          f"at a time, and {runs} are not part of that replay")
    return sample


def compose(mech: Mechanism, k: int) -> Mechanism:
    """Return the mechanism that runs `mech` k times independently; output shape (size, k, *inner).

    Claim: (kε, kδ) (basic composition, Dwork & Roth Thm 3.16); event
    SelfComposedDpEvent(event, k), whose PLD gives the tight bound.
    """
    from dp_accounting import dp_event

    k = check_int(k, "k", "compose")

    def sample(data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        out = np.asarray(mech.sample(data, size * k, rng))
        return out.reshape(size, k, *out.shape[1:])

    _replayed(mech, sample, f"the {k} runs of its composition")
    claim = Claim(k * mech.claim.epsilon, min(k * mech.claim.delta, 0.999), mech.claim.relation)
    return dataclasses.replace(
        mech, name=f"{mech.name}^{k}", sampler=sample, claim=claim,
        event=dp_event.SelfComposedDpEvent(mech.event, k), params={**mech.params, "k": k},
        description=f"{k}-fold composition of {mech.name}.",
    )


def _amplified(claim: Claim, q: float) -> Claim:
    if claim.relation == Relation.REPLACE_ONE:
        return Claim(claim.epsilon, q * claim.delta, claim.relation)
    # log(1 + q(e^ε − 1)) written as ε + log(q + (1 − q)e^−ε), which does not overflow for large ε.
    return Claim(claim.epsilon + math.log(q + (1 - q) * math.exp(-claim.epsilon)), q * claim.delta, claim.relation)


def subsample(mech: Mechanism, q: float) -> Mechanism:
    """Return `mech` run on a Poisson subsample of its data: each record kept with probability q, the others removed.

    The dataset shrinks (a data frame stays a data frame:
    `dpaudit.mechanisms.datasets.select_records`), so `mech` sees only the
    kept records, as the amplification theorem assumes. Trials are grouped
    by which records were kept: one call of `mech` per distinct subsample.
    Claim: (log(1 + q(e^ε − 1)), qδ) for add/remove (Balle, Barthe,
    Gaboardi, NeurIPS 2018, Thm 8); (ε, qδ) for replace-one.
    """
    from dp_accounting import dp_event

    q = check_real(q, "q", "subsample", low=0.0, high=1.0, low_open=True)

    def sample(data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        n = record_count(data)
        if n == 0:
            return np.asarray(mech.sample(data, size, rng))
        kept = rng.random((size, n)) < q
        subsets, which = np.unique(kept, axis=0, return_inverse=True)
        out = None
        for index, chosen in enumerate(subsets):
            rows = np.flatnonzero(which.ravel() == index)
            part = np.asarray(mech.sample(select_records(data, np.flatnonzero(chosen)), len(rows), rng))
            if out is None:
                out = np.empty((size, *part.shape[1:]), dtype=part.dtype)
            out[rows] = part
        return out

    _replayed(mech, sample, "the subsample's own draws (which records are kept)")
    return dataclasses.replace(
        mech, name=f"{mech.name}_subsampled", sampler=sample, claim=_amplified(mech.claim, q),
        event=dp_event.PoissonSampledDpEvent(q, mech.event), params={**mech.params, "q": q},
        description=f"{mech.name} on a Poisson subsample with rate {q:g}.",
    )


def shuffle(randomizer: Mechanism, num_users: Optional[int] = None) -> Mechanism:
    """Return the shuffle model: each record goes through `randomizer` alone; output the sorted multiset of reports.

    `randomizer` must be an ε0-LDP local randomizer (δ = 0) taking a
    one-record dataset and returning one report. Claim: ε0 (shuffling is
    post-processing); event ShuffledDpEvent(ε0, n), bounded by Feldman,
    McMillan, Talwar, "Hiding Among the Clones", FOCS 2021, Thm 3.1.
    """
    from dpaudit.mechanisms.events import ShuffledDpEvent

    if randomizer.claim.delta != 0.0:
        raise InvalidParameterError(f"shuffle needs a pure ε-LDP randomizer; '{randomizer.name}' claims δ > 0.")
    eps0 = randomizer.claim.epsilon
    d0, d1 = randomizer.default_pair
    n = check_int(num_users if num_users is not None else 10, "num_users", "shuffle", low=2)

    def sample(data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        reports = [np.asarray(randomizer.sample(np.asarray([record]), size, rng)).reshape(size, -1)
                   for record in np.asarray(data)]
        return np.sort(np.concatenate(reports, axis=1), axis=1)

    _replayed(randomizer, sample, "the reports of the other users")

    def neighbours(a: np.ndarray, b: np.ndarray) -> Optional[str]:
        changed = np.flatnonzero(a != b)
        if len(changed) > 1:
            return f"they differ in {len(changed)} users' records, more than 1"
        return randomizer.neighbours(a[changed], b[changed]) if len(changed) and randomizer.neighbours else None

    base = np.full(n, np.asarray(d0).ravel()[0])
    other = base.copy()
    other[0] = np.asarray(d1).ravel()[0]
    return dataclasses.replace(
        randomizer, name=f"{randomizer.name}_shuffled", sampler=sample,
        claim=Claim(eps0, 0.0, randomizer.claim.relation), event=ShuffledDpEvent(eps0, n),
        default_pair=(base, other), neighbours=declare(neighbours, domain_of(randomizer.neighbours) or randomizer.records),
        params={**randomizer.params, "num_users": n},
        description=f"{n} users' {randomizer.name} reports, shuffled.",
    )


def group_pair(d0: Any, d1: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return a pair k steps apart grown from a neighbouring pair that differs in one record.

    One record added (d1 holds one more, or d0): that record added k times at
    its place. One record replaced: k records equal to d0's replaced one, each
    replaced as in d1 (copies of it added to both datasets when there are
    fewer than k).

    Raises:
        InvalidParameterError: when the pair differs otherwise.
    """
    a, b = np.asarray(d0), np.asarray(d1)
    if len(a) != len(b):
        return _grown_insertion(a, b, k)
    diff = np.flatnonzero(~equal_rows(a, b))
    if len(diff) != 1:
        raise InvalidParameterError("group needs a default pair that differs in exactly one record.")
    j = diff[0]
    same = np.flatnonzero(equal_rows(a, np.repeat(a[j:j + 1], len(a), axis=0)))
    extra = np.repeat(a[j:j + 1], max(k - len(same), 0), axis=0)
    a = np.concatenate([a, extra])
    other = a.copy()
    other[np.concatenate([same, np.arange(len(b), len(a))])[:k]] = b[j]
    return a, other


def _grown_insertion(a: np.ndarray, b: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (a, b) with the one record that the longer holds beyond the shorter inserted k times instead of once."""
    long, short = (a, b) if len(a) > len(b) else (b, a)
    at = inserted_at(long, short) if len(long) == len(short) + 1 else None
    if at is None:
        raise InvalidParameterError("group needs a default pair in which one dataset is the other with one record added.")
    grown = np.insert(short, at, np.repeat(long[at:at + 1], k, axis=0), axis=0)
    return (grown, short) if long is a else (short, grown)


def group(mech: Mechanism, k: int) -> Mechanism:
    """Return `mech` with neighbours k steps of its relation apart (group privacy).

    The check counts the fewest steps of `mech`'s own relation (its check, or
    its relation's definition with its null record) from one dataset to the
    other (`dpaudit.mechanisms.group_steps`), so a group of size 1 accepts
    exactly the pairs `mech` accepts. Claim: (kε, k e^{(k−1)ε} δ) (Dwork &
    Roth; Vadhan, "The Complexity of Differential Privacy", Lemma 2.2);
    event GroupDpEvent(event, k).
    """
    from dpaudit.mechanisms.events import GroupDpEvent

    k = check_int(k, "k", "group")
    eps, dlt = mech.claim.epsilon, mech.claim.delta
    claim = Claim(k * eps, min(k * math.exp((k - 1) * eps) * dlt, 0.999), mech.claim.relation)
    pair = None if mech.default_pair is None or column_names(mech.default_pair[0]) is not None else (
        group_pair(*mech.default_pair, k))
    return dataclasses.replace(
        mech, name=f"{mech.name}_group{k}", claim=claim, event=GroupDpEvent(mech.event, k), default_pair=pair,
        neighbours=group_check(mech, k), params={**mech.params, "group_size": k},
        description=f"{mech.name} on datasets {k} records apart.",
    )


def copies(mech: Mechanism, k: int) -> Mechanism:
    """Return `mech` run on its data with every record copied k times in a row.

    Replacing (or adding) one distinct record of the input replaces (or adds)
    k records of what `mech` sees, so the claim, event and neighbours (of the
    copied datasets) are those of `group(mech, k)`: this
    is the group-privacy reduction of Steinke & Ullman ("Between Pure and
    Approximate Differential Privacy", arXiv 1501.06095, §4: n/k distinct rows
    each copied k times). The input has n/k records; there is no default pair.
    """
    k = check_int(k, "k", "copies")
    inner = group(dataclasses.replace(mech, default_pair=None), k)

    def sample(data: Any, size: int, rng: np.random.Generator) -> Any:
        return mech.sample(np.repeat(np.asarray(data), k, axis=0), size, rng)

    if callable(getattr(mech.sampler, "replay", None)) and not getattr(mech.sampler, "not_replayable", None):
        def replay(d0: Any, d1: Any, rng: np.random.Generator) -> Any:
            return mech.sampler.replay(np.repeat(np.asarray(d0), k, axis=0), np.repeat(np.asarray(d1), k, axis=0), rng)

        setattr(sample, "replay", replay)
    _replayed(mech, sample, None)

    def neighbours(a: np.ndarray, b: np.ndarray) -> Optional[str]:
        return not_neighbours(inner, np.repeat(a, k, axis=0), np.repeat(b, k, axis=0))

    return dataclasses.replace(
        inner, name=f"{mech.name}_copies{k}", sampler=sample, default_pair=None, neighbours=any_length(neighbours),
        description=f"{mech.name} on every record copied {k} times.",
    )


def _named(mech: Mechanism, name: str) -> Mechanism:
    return dataclasses.replace(mech, name=name)


@register("composed_laplace", expected="consistent")
def composed_laplace(*, epsilon: float = 0.5, k: int = 4) -> Mechanism:
    """Return k independent runs of `laplace(epsilon)`: claim kε; exact ε is kε at δ = 0."""
    return _named(compose(laplace(epsilon=epsilon), k), "composed_laplace")


@register("subsampled_laplace", expected="consistent")
def subsampled_laplace(*, epsilon: float = 2.0, q: float = 0.5) -> Mechanism:
    """Return `laplace(epsilon)` on a Poisson subsample of rate q: ε' = log(1 + q(e^ε − 1)) (add/remove)."""
    return _named(subsample(laplace(epsilon=epsilon), q), "subsampled_laplace")


@register("shuffled_rr", expected="consistent")
def shuffled_rr(*, epsilon: float = 2.0, num_users: int = 10) -> Mechanism:
    """Return binary randomized response run by n users, reports shuffled (FMT 2021 bound)."""
    return _named(shuffle(randomized_response(epsilon=epsilon, k=2), num_users), "shuffled_rr")


@register("group_laplace", expected="consistent")
def group_laplace(*, epsilon: float = 1.0, k: int = 2) -> Mechanism:
    """Return `laplace(epsilon)` audited on datasets k records apart: exact ε is kε."""
    return _named(group(laplace(epsilon=epsilon), k), "group_laplace")
