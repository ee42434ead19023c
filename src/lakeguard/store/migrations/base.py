"""What a migration is (its number, its name, why, and what it does), and how it works on
every table at once."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    why: str
    apply: Callable[[MetadataStore], list[str]]  # idempotent; returns what it changed


T = TypeVar("T")
# Each table's work is a few delta-rs round trips that release the GIL; on an object store
# each is an HTTP request, so one table after another took ~10 s for a store of 30 tables.
TABLES_AT_ONCE = 8


def each_table(work: Callable[[str], T], tables: Iterable[str]) -> list[T]:
    """`work(table)` for every table, several at once; the results in the tables' order.

    Tables are independent (each has its own log), so the order they are done in does not
    matter; the first failure is raised once every table's work has ended, so an interrupted
    migration leaves no table half-way through a step it was still doing.
    """
    names = list(tables)
    if len(names) <= 1:
        return [work(t) for t in names]
    with ThreadPoolExecutor(max_workers=min(TABLES_AT_ONCE, len(names))) as pool:
        futures = [pool.submit(work, t) for t in names]
    return [f.result() for f in futures]
