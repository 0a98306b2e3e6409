"""Counts the pages state about the registry, read from the registry: `<!-- fact: NAME -->N<!-- /fact -->` in a page.

A fact's NAME is one group or several joined by `+`: `builtins` (the
built-ins and transforms), `correct` and `buggy` (those of them expected
consistent or a violation), or an adapter module's name (`diffprivlib`,
`opendp`, `pydp`, ...: the mechanisms it registers here). The tests fail
when a page shows another number (`test_pages.py`); `python
tests/docs/facts.py --write` rewrites every marked number from the registry.
Measured results (how many an audit flagged) are not facts: they are
re-run, not rewritten.
"""

from __future__ import annotations

import argparse
import collections
import re

from documented import pages

FACT = re.compile(r"(<!-- fact: (?P<name>[\w+-]+) -->)(?P<shown>[\d,]*)(<!-- /fact -->)")


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


def value(name: str, known: dict[str, int]) -> int:
    """Return the fact `name`: the sum of its groups (a group this environment lacks counts 0)."""
    return sum(known.get(part, 0) for part in name.split("+"))


def stale() -> list[str]:
    """Return one line per marked number that differs from the registry: page, fact, shown, actual."""
    known, found = groups(), []
    for page in pages():
        for match in FACT.finditer(page.read_text(encoding="utf-8")):
            actual = value(match["name"], known)
            if match["shown"].replace(",", "") != str(actual):
                found.append(f"{page.name}: {match['name']} shows {match['shown']!r}, the registry has {actual}")
    return found


def write() -> int:
    """Rewrite every marked number from the registry; return how many changed."""
    known, changed = groups(), 0
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = FACT.sub(lambda m: f"{m[1]}{value(m['name'], known):,}{m[4]}", text)
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
