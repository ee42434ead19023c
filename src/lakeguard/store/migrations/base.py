"""What a migration is (its number, its name, why, and what it does), and how it works on
every table at once."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from deltalake import DeltaTable

from lakeguard.store import deltars
from lakeguard.store.objectstore import is_remote
from lakeguard.store.rewrite import in_progress, resume
from lakeguard.store.versioning import MIGRATING_SUFFIX

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


def resumed(table: str, location: str) -> DeltaTable | None:
    """The table at `location` (None: there is none), a rewrite an interrupted run left in it
    finished or undone first (`rewrite.resume`), as a migration run on its own needs.

    It is read once when no rewrite was left (under `laketx migrate`, which resumes every
    table first, always): `resume` then a read of its own was a second read of each table."""
    if not is_remote(location) and os.path.exists(location + MIGRATING_SUFFIX):
        resume(table, location)  # an older laketx's rename, cut short
    if not deltars.is_table(location):
        return None
    dt = deltars.load(table, location)
    if in_progress(dt.metadata().configuration) is None:
        return dt
    resume(table, location)
    return deltars.load(table, location)
