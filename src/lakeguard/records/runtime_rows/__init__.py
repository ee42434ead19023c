"""One typed row class per runtime table, and that table's one declaration (pure).

A class's fields are its table's columns, in order, with their types, nullability and
comments; its `TABLE` is the rest (name, comment, date partition, Z-order columns):
`rowschema.py` reads the table off the class, and `definitions.py` ships it with the
definition tables. Fields with a vocabulary carry its type. Writers append these rows, never a
table name plus a dict; the reader reads full rows back as them (`from_row`).

One module per table family (runs, checks, progress, gate, coordination, upkeep, alerts) over
`base.py`; this package lists every class in `ROW_TYPES` (a new runtime table is added there)
and names them all for their many writers and readers.
"""

from __future__ import annotations

from lakeguard.records.runtime_rows.alerts import DeliveryRow, IncidentEventRow
from lakeguard.records.runtime_rows.base import RuntimeRow, new_id
from lakeguard.records.runtime_rows.checks import (
    DqResultRow,
    ProfileRow,
    RuleResultRow,
    SchemaChangeRow,
    SchemaSnapshotRow,
    TrustScoreRow,
)
from lakeguard.records.runtime_rows.coordination import LeaseEventRow, RunRequestRow
from lakeguard.records.runtime_rows.gate import DataVersionRow, DecisionRow
from lakeguard.records.runtime_rows.progress import RejectedFileRow, SourceProgressRow
from lakeguard.records.runtime_rows.runs import (
    PipelineRunRow,
    RunEventRow,
    RunHistoryRow,
    StepLogRow,
)
from lakeguard.records.runtime_rows.upkeep import MetadataSyncRow, StoreMigrationRow

ROW_TYPES: tuple[type[RuntimeRow], ...] = (
    StoreMigrationRow,
    MetadataSyncRow,
    RunRequestRow,
    PipelineRunRow,
    RunEventRow,
    StepLogRow,
    RunHistoryRow,
    DqResultRow,
    RuleResultRow,
    ProfileRow,
    SchemaSnapshotRow,
    SchemaChangeRow,
    SourceProgressRow,
    RejectedFileRow,
    TrustScoreRow,
    DataVersionRow,
    DecisionRow,
    LeaseEventRow,
    IncidentEventRow,
    DeliveryRow,
)

__all__ = [
    "ROW_TYPES",
    "DataVersionRow",
    "DecisionRow",
    "DeliveryRow",
    "DqResultRow",
    "IncidentEventRow",
    "LeaseEventRow",
    "MetadataSyncRow",
    "PipelineRunRow",
    "ProfileRow",
    "RejectedFileRow",
    "RuleResultRow",
    "RunEventRow",
    "RunHistoryRow",
    "RunRequestRow",
    "RuntimeRow",
    "SchemaChangeRow",
    "SchemaSnapshotRow",
    "SourceProgressRow",
    "StepLogRow",
    "StoreMigrationRow",
    "TrustScoreRow",
    "new_id",
]
