"""The read side of the store: named queries that return typed records (no Spark).

The engine, the gate and the facade read metadata only through here; every filter on a
metadata table lives in the modules of `lakeguard.reads` (or in the store beneath them),
one concern each, composed here into one reader.
"""

from __future__ import annotations

from lakeguard.reads.audit import AuditReads
from lakeguard.reads.decisions import DecisionReads
from lakeguard.reads.runs import RunReads


class StoreReader(DecisionReads, RunReads, AuditReads):
    """Read-only access to one tenant's metadata (sqlmesh's StateReader, for LakeGuard):
    definitions, versions, decisions, status and trust, runs, and the audit's rows."""
