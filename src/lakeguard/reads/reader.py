"""The read side of the store: named queries that return typed records (no Spark).

The engine, the gate and the facade read metadata only through here; every filter on a
metadata table lives in the modules of `lakeguard.reads` (or in the store beneath them), one
reader per concept, composed here into one reader: `reader.runs.job_runs()`,
`reader.decisions.latest_decision(...)`.
"""

from __future__ import annotations

from lakeguard.reads.audit import AuditReads
from lakeguard.reads.decisions import DecisionReads
from lakeguard.reads.definitions import DefinitionReads
from lakeguard.reads.runs import RunReads
from lakeguard.reads.status import StatusReads
from lakeguard.reads.versions import VersionReads
from lakeguard.records.reach import Reach
from lakeguard.store.store import MetadataStore


class StoreReader:
    """Read-only access to one tenant's metadata (sqlmesh's StateReader, for LakeGuard), one
    reader per concept: definitions, versions, status and trust, decisions, runs, and the
    audit's rows."""

    def __init__(self, store: MetadataStore) -> None:
        self._store = store
        self.definitions = DefinitionReads(store)
        self.versions = VersionReads(store)
        self.status = StatusReads(store, self.definitions)
        self.decisions = DecisionReads(store, self.versions, self.status)
        self.runs = RunReads(store)
        self.audit = AuditReads(store, self.definitions)

    @property
    def tenant(self) -> str:
        return self._store.tenant

    def tenant_reach(self) -> Reach:
        """What the tenant's definitions may reach (`MetadataStore.tenant_reach`)."""
        return self._store.tenant_reach()
