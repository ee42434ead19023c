"""A folder of YAML documents kept in sync with the store (seed 004's metadata monitor).

Each pass looks at every `*.yaml`/`*.yml` under the folder. A version of a file (its sha256)
that no sync has settled is validated and planned; an invalid one is refused with its errors
and nothing of it is applied; a valid one is claimed (a compare-and-set append of an APPLYING
row to `metadata_syncs`), applied, and recorded with what changed. Two watchers on one folder
thus apply each version once: the second sees the claim, or the settled row, and moves on. A
claim whose watcher died (on this host) or that is older than `STALE` is taken over.

A file removed from the folder deactivates the definitions it defined (those no other file of
the folder defines) only when the watcher was started with `deactivate_missing`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from lakeguard.actors.catalog.apply import apply_file, plan_file
from lakeguard.records.definitions.sets import DOCUMENT_TABLES
from lakeguard.records.upkeep import MetadataSyncRow
from lakeguard.rules.catalog.plan import Plan, deactivated, row_key
from lakeguard.words.errors import LakeTxError, ValidationError
from lakeguard.words.liveness import known_dead, worker_instance
from lakeguard.words.vocabulary import SyncOutcome

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

# A claim older than this is taken over (its watcher stopped without saying so).
STALE = timedelta(minutes=10)
# Rows every document shares (the shipped profiles, one target per layer): a removed document
# never deactivates them.
SHARED_TABLES = frozenset({"schema_compatibility_rules", "targets"})


class SyncChange(TypedDict):
    """A definition row a pass wrote: its table, its key and what it did (`create`,
    `update`, `deactivate`)."""

    table: str
    key: list[object]
    action: str


@dataclass(frozen=True)
class SyncResult:
    """What one pass did with one file."""

    file: str
    outcome: SyncOutcome
    changes: list[SyncChange] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)


def _changes(plan: Plan) -> list[SyncChange]:
    return [
        {"table": c.table, "key": list(c.key), "action": c.action}
        for c in plan.changes
        if c.action != "unchanged"
    ]


class FolderWatcher:
    """Syncs the YAML documents of one folder into one tenant's store."""

    def __init__(
        self,
        store: MetadataStore,
        folder: str | Path,
        warehouse: str,
        *,
        deactivate_missing: bool = False,
    ) -> None:
        self.store = store
        self.folder = Path(folder).resolve()
        self.warehouse = warehouse
        self.deactivate_missing = deactivate_missing
        self.worker = worker_instance()

    # -- one pass -------------------------------------------------------------------------
    def sync(self) -> list[SyncResult]:
        """One pass over the folder: every file version not yet settled, then removals."""
        if not self.folder.is_dir():
            raise ValidationError(
                f"{self.folder} is not a folder",
                where=str(self.folder),
                errors=[{"path": str(self.folder), "message": "no such folder"}],
                fix="create the folder, or watch the one the documents are dropped in",
            )
        history = self._history()
        present = self._documents()
        results = [r for p in present if (r := self._sync_file(p, history)) is not None]
        if self.deactivate_missing:
            names = {self._name(p) for p in present}
            results += self._deactivate_removed(names, self._history())
        return results

    def _documents(self) -> list[Path]:
        found = [
            p
            for p in self.folder.rglob("*")
            if p.suffix in (".yaml", ".yml")
            and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(self.folder).parts)
        ]
        return sorted(found)

    def _name(self, path: Path) -> str:
        return path.relative_to(self.folder).as_posix()

    def _history(self) -> list[MetadataSyncRow]:
        rows = self.store.read(MetadataSyncRow, filters=[("folder", "=", str(self.folder))])
        return sorted(rows, key=lambda r: r.synced_at)

    def _row(self, name: str, digest: str, outcome: SyncOutcome, **extra: Any) -> MetadataSyncRow:
        return MetadataSyncRow(
            tenant_id=self.store.tenant,
            folder=str(self.folder),
            file=name,
            content_hash=digest,
            outcome=outcome,
            watcher=self.worker,
            synced_at=self.store.now(),
            **{k: json.dumps(v, default=str) for k, v in extra.items()},
        )

    def _open_claim(self, rows: Iterable[MetadataSyncRow]) -> bool:
        """Whether another live watcher is applying this version right now."""
        latest = max(rows, key=lambda r: r.synced_at, default=None)
        if latest is None or latest.outcome != SyncOutcome.APPLYING:
            return False
        if latest.watcher == self.worker or known_dead(latest.watcher):
            return False
        return bool(self.store.now() - latest.synced_at < STALE)

    def _record(self, row: MetadataSyncRow, *, claim: bool = False) -> bool:
        """Append `row` unless the version is settled (or, for a claim, claimed by a live
        watcher); True when it was appended."""

        def decide(rows: list[MetadataSyncRow]) -> list[MetadataSyncRow] | None:
            seen = _version_rows(rows, row.file, row.content_hash)
            if any(r.outcome.settled for r in seen):
                return None
            if claim and self._open_claim(seen):
                return None
            return [row]

        filters = [("folder", "=", row.folder), ("file", "=", row.file)]
        return self.store.append_if(MetadataSyncRow, decide, filters=filters) is not None

    def _sync_file(self, path: Path, history: list[MetadataSyncRow]) -> SyncResult | None:
        name = self._name(path)
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        seen = _version_rows(history, name, digest)
        if any(r.outcome.settled for r in seen) or self._open_claim(seen):
            return None
        try:
            text = data.decode("utf-8")
            plan, rows = plan_file(self.store, path, self.warehouse, text=text)
        except UnicodeDecodeError as exc:
            return self._refuse(name, digest, [{"path": name, "message": f"not UTF-8: {exc}"}])
        except ValidationError as exc:
            return self._refuse(name, digest, exc.errors)
        if plan.conflicts:
            return self._refuse(name, digest, plan.conflicts)
        definitions = [
            [table, *row_key(r)]
            for table, table_rows in rows.tables()
            if table not in SHARED_TABLES
            for r in table_rows
        ]
        if not self._record(self._row(name, digest, SyncOutcome.APPLYING), claim=True):
            return None  # another watcher has it
        try:
            applied = apply_file(self.store, path, self.warehouse, text=text)
        except LakeTxError as exc:
            errors = [{"path": name, "message": exc.message}]
            self.store.append_rows([self._row(name, digest, SyncOutcome.FAILED, errors=errors)])
            return SyncResult(name, SyncOutcome.FAILED, errors=errors)
        outcome = SyncOutcome.APPLIED if applied.has_changes else SyncOutcome.UNCHANGED
        changes = _changes(applied)
        done = self._row(name, digest, outcome, changes=changes, definitions=definitions)
        self.store.append_rows([done])
        return SyncResult(name, outcome, changes)

    def _refuse(self, name: str, digest: str, errors: list[dict[str, str]]) -> SyncResult | None:
        row = self._row(name, digest, SyncOutcome.REFUSED, errors=errors)
        if not self._record(row):
            return None
        return SyncResult(name, SyncOutcome.REFUSED, errors=errors)

    # -- removals -------------------------------------------------------------------------
    def _deactivate_removed(
        self, present: set[str], history: list[MetadataSyncRow]
    ) -> list[SyncResult]:
        last: dict[str, MetadataSyncRow] = {}
        for row in history:  # oldest first: the last settled row of each file wins
            if row.outcome in (
                SyncOutcome.APPLIED,
                SyncOutcome.UNCHANGED,
                SyncOutcome.DEACTIVATED,
            ):
                last[row.file] = row
        defined_elsewhere = {
            tuple(d) for name, row in last.items() if name in present for d in _defs(row)
        }
        results = []
        for name, row in sorted(last.items()):
            if name in present or row.outcome == SyncOutcome.DEACTIVATED:
                continue
            gone = [d for d in _defs(row) if tuple(d) not in defined_elsewhere]
            changes = self._deactivate(gone)
            record = self._row(name, row.content_hash, SyncOutcome.DEACTIVATED, changes=changes)
            if self._record_removal(record):
                results.append(SyncResult(name, SyncOutcome.DEACTIVATED, changes))
        return results

    def _record_removal(self, row: MetadataSyncRow) -> bool:
        def decide(rows: list[MetadataSyncRow]) -> list[MetadataSyncRow] | None:
            latest = max(rows, key=lambda r: r.synced_at, default=None)
            if latest is not None and latest.outcome == SyncOutcome.DEACTIVATED:
                return None  # another watcher recorded it (its writes and ours are the same)
            return [row]

        filters = [("folder", "=", row.folder), ("file", "=", row.file)]
        return self.store.append_if(MetadataSyncRow, decide, filters=filters) is not None

    def _deactivate(self, definitions: list[list[Any]]) -> list[SyncChange]:
        """Deactivate the stored definitions named; what changed (idempotent: an inactive
        row is left alone)."""
        by_table: dict[str, set[tuple[Any, ...]]] = {}
        for table, *named in definitions:
            by_table.setdefault(table, set()).add(tuple(named))
        changes: list[SyncChange] = []
        for table, keys in sorted(by_table.items()):
            rows = []
            for stored in self.store.definitions(DOCUMENT_TABLES[table], active_only=False):
                key = row_key(stored)
                if key in keys and stored.active:
                    rows.append(deactivated(stored))
                    changes.append({"table": table, "key": list(key), "action": "deactivate"})
            if rows:
                self.store.upsert(table, rows)
        return changes


def _defs(row: MetadataSyncRow) -> list[list[Any]]:
    found = json.loads(row.definitions or "[]")
    return found if isinstance(found, list) else []


def _version_rows(rows: Iterable[MetadataSyncRow], name: str, digest: str) -> list[MetadataSyncRow]:
    """The sync rows of this version of this file since the file was last removed (a
    document dropped in again after a removal is synced again)."""
    own = sorted((r for r in rows if r.file == name), key=lambda r: r.synced_at)
    removed = [i for i, r in enumerate(own) if r.outcome == SyncOutcome.DEACTIVATED]
    since = own[removed[-1] + 1 :] if removed else own
    return [r for r in since if r.content_hash == digest]
