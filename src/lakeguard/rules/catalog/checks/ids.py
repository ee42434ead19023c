"""Ids used more than once in a section of the document."""

from __future__ import annotations

from collections import Counter

from lakeguard.words.problems import Problem


def duplicates(section: str, ids: list[str]) -> list[Problem]:
    """A problem at each entry of `section` whose id another entry uses too."""
    counts = Counter(ids)
    return [
        Problem((section, i, "id"), f"id {v!r} is used {counts[v]} times in {section}")
        for i, v in enumerate(ids)
        if counts[v] > 1
    ]
