"""Counts and lists the pages state about the registries, read from them: `<!-- fact: NAME -->N<!-- /fact -->` in a page.

A count's NAME is one group or several joined by `+`: `builtins` (the
built-ins and transforms), `correct` and `buggy` (those of them expected
consistent or a violation), or an adapter module's name (`diffprivlib`,
`opendp`, `pydp`, ...: the mechanisms it registers here). A list's NAME is
one of LISTS: `estimators` (the membership estimators by game, their
defaults and assumptions, from `certify.ESTIMATORS`). The tests fail when a
page shows another number or list (`test_pages.py`); `python
tests/docs/facts.py --write` rewrites every marked fact from the registries.
Measured results (how many an audit flagged) are not facts: they are
re-run, not rewritten.
"""

from __future__ import annotations

import argparse
import collections
import re

from documented import pages

FACT = re.compile(r"(<!-- fact: (?P<name>[\w+-]+) -->)(?P<shown>[^<]*)(<!-- /fact -->)")


def _estimators() -> str:
    from dpaudit.audit.estimators.certify import describe_estimators

    return describe_estimators()


LISTS = {"estimators": _estimators}
"""The listed facts, by name: each a function returning the text a page shows (Markdown)."""


def groups() -> dict[str, int]:
    """Return each group's count of registered mechanisms, from the registry of this environment."""
    from dpaudit.mechanisms.registry import list_mechanisms, registration

    counts: collections.Counter[str] = collections.Counter()
    for name in list_mechanisms():
        entry = registration(name)
        module = entry.factory.__module__
        if ".adapters." in module:
            counts[module.rsplit(".", 1)[1]] += 1
        else:
            counts["builtins"] += 1
            counts[{"violation": "buggy", "consistent": "correct"}.get(entry.expected, "unknown")] += 1
    return dict(counts)


def value(name: str, known: dict[str, int]) -> int | str:
    """Return the fact `name`: a list's text (LISTS), else the sum of its groups (a group this environment lacks counts 0)."""
    if name in LISTS:
        return LISTS[name]()
    return sum(known.get(part, 0) for part in name.split("+"))


def shown(fact: int | str) -> str:
    """Return the fact as a page shows it: a count with thousands separators, a list as it is."""
    return fact if isinstance(fact, str) else f"{fact:,}"


def stale() -> list[str]:
    """Return one line per marked fact that differs from the registries: page, fact, shown, actual."""
    known, found = groups(), []
    for page in pages():
        for match in FACT.finditer(page.read_text(encoding="utf-8")):
            actual = value(match["name"], known)
            if match["shown"] != shown(actual):
                found.append(f"{page.name}: {match['name']} shows {match['shown']!r}, the registry has {actual}")
    return found


def write() -> int:
    """Rewrite every marked fact from the registries; return how many pages changed."""
    known, changed = groups(), 0
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = FACT.sub(lambda m: f"{m[1]}{shown(value(m['name'], known))}{m[4]}", text)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed += 1
    return changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the marked numbers (else list the stale ones)")
    args = parser.parse_args()
    if args.write:
        print(f"{write()} pages rewritten")
    else:
        print("\n".join(stale()) or "every marked number is the registry's")


if __name__ == "__main__":
    main()
