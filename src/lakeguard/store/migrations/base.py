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
# each is an HTTP request, whose latency tables done one after another add up.
TABLES_AT_ONCE = 8


def each_table(work: Callable[[str], T], tables: Iterable[str]) -> list[T]:
    """`work(table)` for every table, several at once; the results in the tables' order.

    Tables are independent (each has its own log), so the order they are done in does not
    matter; a failure is raised once every table's work has ended (the pool runs and waits
    for all of it as it shuts down), so none is left half-way through a step.
    """
    with ThreadPoolExecutor(max_workers=TABLES_AT_ONCE) as pool:
        return list(pool.map(work, tables))
