"""Typed records of the metadata tables, as the store's reader returns them (pure).

The engine, the gate and the facade see these frozen records, never raw rows or DataFrames.
Each `from_row` takes one stored row as its row class (`runtime_rows/`, `definition_rows/`:
a NULL in a defaulted column already its default) and parses its JSON-in-STRING columns once
(`parsing.py`); definition rows come from documents and direct SQL edits, and are checked here
and in `lakeguard.rules.catalog.recheck`. One module per family:
definitions (`definitions.py`, `sources.py`), versions and status (`versions.py`), decisions
(`decisions.py`), runs and leases (`runs.py`); this package names them all, as its many
importers (the engine, the gate, the policies, the service) use them.
"""

from __future__ import annotations

from lakeguard.records.stored.alerts import ChannelDef, RouteDef
from lakeguard.records.stored.decisions import DecisionRecord, RuleResult, SchemaChange
from lakeguard.records.stored.definitions import (
    DatasetDef,
    JobDef,
    JobTaskDef,
    PolicyDef,
    RuleDef,
    Transform,
)
from lakeguard.records.stored.runs import InFlightRun, JobRunRecord, Lease
from lakeguard.records.stored.sources import SourceColumnDef, SourceObjectDef, SourceSystemDef
from lakeguard.records.stored.versions import ApprovedVersion, DatasetStatus

__all__ = [
    "ApprovedVersion",
    "ChannelDef",
    "DatasetDef",
    "DatasetStatus",
    "DecisionRecord",
    "InFlightRun",
    "JobDef",
    "JobRunRecord",
    "JobTaskDef",
    "Lease",
    "PolicyDef",
    "RouteDef",
    "RuleDef",
    "RuleResult",
    "SchemaChange",
    "SourceColumnDef",
    "SourceObjectDef",
    "SourceSystemDef",
    "Transform",
]
