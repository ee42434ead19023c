"""Answers read from the newest snapshot of a metadata table, kept while it stays the newest.

A Delta snapshot never changes, so the rows a query read from version v are its rows for as
long as v is the table's newest version. A long-lived process (`laketx serve`) asks the same
questions over and over; this cache answers them again without opening the table or running
DataFusion, after one cheap check that nothing was committed since.

The check is `store.kept.KeptTable`'s, the one every kept table takes: on a local table two
`stat` calls (the kept commit file is the same file, no next one yet).

Answers are rows (plain dicts); each caller gets its own copies of them (lists included). The
cache holds at most `max_bytes` of answers (as Arrow sizes them) and `max_tables` open tables,
dropping the least recently used first.

`memo` keeps a derived answer (a page of runs, the status of every dataset) under a stamp of
the tables it came from. To stay cheap under many concurrent requests it may trust a table's
check for `window` seconds: a commit by another process then shows there up to that much
later. A commit through this process's store is seen at once (`touched`), and `read`, which
every decision and write path uses, always checks.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from typing import TypeVar, cast

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.exceptions import DeltaError, TableNotFoundError

from lakeguard.records.kept import Identity, KeptTable, commit_identity, local_path
from lakeguard.store.arrow import to_rows
from lakeguard.words.errors import LakeTxError
from lakeguard.words.shapes import StoredRow

T = TypeVar("T")

MAX_BYTES = 64 * 1024 * 1024
MAX_TABLES = 256
MAX_MEMOS = 256
WINDOW = 0.25  # seconds a memo may trust a table's last check
Stamp = tuple[tuple[int, Identity | None], ...]


def _copy(row: StoredRow) -> StoredRow:
    return {k: list(v) if isinstance(v, list) else v for k, v in row.items()}


class Snapshots:
    """Per-process cache of query answers over the newest snapshots of metadata tables."""

    def __init__(self, max_bytes: int = MAX_BYTES, max_tables: int = MAX_TABLES) -> None:
        self.max_bytes, self.max_tables = max_bytes, max_tables
        self._tables: OrderedDict[str, KeptTable] = OrderedDict()
        self._answers: OrderedDict[Hashable, tuple[int, list[StoredRow]]] = OrderedDict()
        self._bytes = 0
        self._memos: OrderedDict[Hashable, tuple[Stamp, object]] = OrderedDict()
        self._flights: dict[Hashable, threading.Lock] = {}
        self._latest: dict[Hashable, tuple[float, object]] = {}  # last computed, when it began
        self._lock = threading.Lock()

    def _table(self, location: str) -> KeptTable:
        found = self._tables.get(location)
        if found is not None:
            return found
        with self._lock:
            found = self._tables.get(location)
            if found is None:
                found = self._tables[location] = KeptTable(location)
                while len(self._tables) > self.max_tables:
                    self._tables.popitem(last=False)  # the oldest opened goes first
            return found

    def open(self, locations: Sequence[str]) -> None:
        """Open the newest snapshot of each table now (several at once), so that the first
        read or commit that needs one does not (a service warming up before its first run)."""

        def newest(location: str) -> None:
            table = self._table(location)
            with table.lock:
                table.newest()

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(newest, locations))

    def touched(self, location: str) -> None:
        """This process committed to the table: the next stamp checks it."""
        found = self._tables.get(location)
        if found is not None:
            found.checked_at = -math.inf

    @contextmanager
    def writing(self, location: str) -> Iterator[DeltaTable]:
        """The table's newest snapshot, to commit on top of: brought up to date from the
        commits since it was last seen, where opening the table afresh reads its whole log.
        The caller has it alone (this process's readers of the table wait); a commit that
        fails leaves it to be opened afresh."""
        # refused before any commit (a lease held, a version taken): the snapshot stays good
        with self._held(location, missing_ok=False, kept_after=LakeTxError) as snapshot:
            assert snapshot is not None  # a missing table raised
            yield snapshot

    @contextmanager
    def held(self, location: str) -> Iterator[DeltaTable | None]:
        """`writing` for a caller that opens, checks and may alter a table that need not exist
        (None then; the caller may create it meanwhile): the store's `ensure` and migrations,
        which each process runs over every table. Any failure in the block drops the kept
        snapshot."""
        with self._held(location, missing_ok=True, kept_after=()) as snapshot:
            yield snapshot

    @contextmanager
    def _held(
        self,
        location: str,
        *,
        missing_ok: bool,
        kept_after: type[BaseException] | tuple[type[BaseException], ...],
    ) -> Iterator[DeltaTable | None]:
        table = self._table(location)
        with table.lock:
            try:
                snapshot: DeltaTable | None = table.newest()
            except TableNotFoundError:
                if not missing_ok:
                    raise
                table.snapshot = snapshot = None
            try:
                yield snapshot
            except kept_after:
                raise
            except BaseException:
                table.snapshot = None  # its state after a failed commit is not to be trusted
                raise
            else:  # it holds the commit now: the file's identity is the one just written
                if snapshot is not None:
                    table.version = int(snapshot.version())
                    path = local_path(location)
                    table.identity = None if path is None else commit_identity(path, table.version)
            finally:
                table.checked_at = -math.inf  # the next use checks for others' commits

    def read(
        self, location: str, query: Hashable, scan: Callable[[DeltaTable], pa.Table]
    ) -> list[StoredRow]:
        """The rows `scan` reads from the table's newest snapshot; `query` must identify
        the scan (same query, same snapshot: same rows)."""
        table = self._table(location)
        # One reader per table at a time: a snapshot object is not safe to update or scan
        # from two threads, and a second reader of the same query then finds its answer here.
        with table.lock:
            snapshot = table.newest()
            key = (location, table.version, table.identity, query)
            return self._answer(key, lambda: scan(snapshot))

    def query(
        self,
        locations: Sequence[str],
        query: Hashable,
        run: Callable[[list[DeltaTable]], pa.Table],
    ) -> list[StoredRow]:
        """The rows `run` reads from the newest snapshots of several tables (a join), kept
        like `read`'s answers: same query, same snapshots, same rows."""
        tables = [self._table(location) for location in locations]
        # every table's lock, always in the same order: two joins never wait on each other
        order = sorted(range(len(tables)), key=lambda i: tables[i].location)
        with ExitStack() as held:
            for i in order:
                held.enter_context(tables[i].lock)
            snapshots = [t.newest() for t in tables]
            key = (tuple((t.location, t.version, t.identity) for t in tables), query)
            return self._answer(key, lambda: run(snapshots))

    def _answer(self, key: Hashable, compute: Callable[[], pa.Table]) -> list[StoredRow]:
        """The answer kept under `key`, else `compute`d and kept (call with the tables'
        locks held); each caller gets its own copies of the rows."""
        with self._lock:
            kept = self._answers.get(key)
            if kept is not None:
                self._answers.move_to_end(key)
        if kept is None:
            data = compute()
            kept = (int(data.nbytes), to_rows(data))
            self._keep(key, kept)
        return [_copy(r) for r in kept[1]]

    def stamp(self, locations: Sequence[str], window: float = 0.0) -> Stamp:
        """The newest version of each table (with its commit file's identity), in order; a
        table checked less than `window` seconds ago is taken as it was then."""
        out: list[tuple[int, Identity | None]] = []
        now = time.monotonic()
        for location in locations:
            table = self._table(location)
            if now - table.checked_at < window:
                out.append((table.version, table.identity))
                continue
            with table.lock:
                try:
                    table.newest()
                except (DeltaError, OSError):
                    # missing or unreadable: whatever reads it says so, with where and how to fix
                    table.snapshot = None
                    out.append((-1, None))
                    continue
                out.append((table.version, table.identity))
        return tuple(out)

    def memo(
        self,
        key: Hashable,
        locations: Sequence[str],
        compute: Callable[[], T],
        window: float = WINDOW,
    ) -> T:
        """`compute()`, or the value it gave last time for `key` if none of the tables at
        `locations` changed since (the value must be immutable)."""
        before = self.stamp(locations, window)
        found = self._memo(key, before)
        if found is not None:
            return cast(T, found[0])
        arrived = time.monotonic()
        with self._lock:
            flight = self._flights.setdefault(key, threading.Lock())
            while len(self._flights) > 2 * MAX_MEMOS:  # keys age out (their minute passes)
                oldest = next(iter(self._flights))
                del self._flights[oldest]
                self._latest.pop(oldest, None)
        # Requests that arrive together wait for one computation, and take its value when it
        # started after they arrived (it saw every commit they could have seen).
        with flight:
            found = self._memo(key, before)
            if found is not None:
                return cast(T, found[0])
            started, value = self._latest.get(key, (-math.inf, None))
            if started >= arrived:
                return cast(T, value)
            started = time.monotonic()
            value = self._compute(key, locations, compute, before)
            self._latest[key] = (started, value)
            return value

    def _memo(self, key: Hashable, stamp: Stamp) -> tuple[object] | None:
        with self._lock:
            found = self._memos.get(key)
            if found is None or found[0] != stamp:
                return None
            self._memos.move_to_end(key)
            return (found[1],)

    def _compute(
        self, key: Hashable, locations: Sequence[str], compute: Callable[[], T], before: Stamp
    ) -> T:
        value = compute()
        # keep it only when nothing was committed while it was computed
        if self.stamp(locations) == before:
            with self._lock:
                self._memos[key] = (before, value)
                self._memos.move_to_end(key)
                while len(self._memos) > MAX_MEMOS:
                    dropped, _ = self._memos.popitem(last=False)
                    self._flights.pop(dropped, None)
                    self._latest.pop(dropped, None)
        return value

    def _keep(self, key: Hashable, answer: tuple[int, list[StoredRow]]) -> None:
        if answer[0] > self.max_bytes // 4:
            return
        with self._lock:
            if key in self._answers:
                return
            self._answers[key] = answer
            self._bytes += answer[0]
            while self._bytes > self.max_bytes:
                _, (size, _) = self._answers.popitem(last=False)
                self._bytes -= size

    def clear(self) -> None:
        with self._lock:
            self._tables.clear()
            self._answers.clear()
            self._memos.clear()
            self._flights.clear()
            self._latest.clear()
            self._bytes = 0


# One per process: every store over the same folder shares what it read.
SNAPSHOTS = Snapshots()
