"""One typed row class per definition table, and that table's one declaration (pure).

A class's fields are its table's columns, in order, with their types, nullability, comments
and defaults; its `TABLE` names it, says its comment and its upsert keys (`rowschema.py` reads
the table off the class; `definitions.py` ships it). A field with a default is the column's one
default: a NULL stored there (a direct SQL edit, a column added later) reads as it, in a run,
an export and the API alike, and the document's model takes its default from the field.

One module per concept (jobs, datasets, checks, sources, alerts, keys) over `base.py`;
`sets.py` holds one tenant's rows of every table a document makes (`DefinitionSet`). A new
definition table is added to `ROW_TYPES` (and, if a document makes it, to `DefinitionSet`).
"""

from __future__ import annotations

from lakeguard.records.definition_rows.alerts import ChannelRow, RouteRow
from lakeguard.records.definition_rows.base import DefinitionRow
from lakeguard.records.definition_rows.checks import PolicyRuleRow, QualityRuleRow, SchemaRuleRow
from lakeguard.records.definition_rows.datasets import DatasetRow, TargetRow
from lakeguard.records.definition_rows.jobs import JobParameterRow, JobRow, JobTaskRow
from lakeguard.records.definition_rows.keys import ApiKeyRow
from lakeguard.records.definition_rows.sets import DOCUMENT_TABLES, DefinitionSet
from lakeguard.records.definition_rows.sources import (
    SourceColumnRow,
    SourceObjectRow,
    SourceSystemRow,
)

ROW_TYPES: tuple[type[DefinitionRow], ...] = (*DOCUMENT_TABLES.values(), ApiKeyRow)

__all__ = [
    "DOCUMENT_TABLES",
    "ROW_TYPES",
    "ApiKeyRow",
    "ChannelRow",
    "DatasetRow",
    "DefinitionRow",
    "DefinitionSet",
    "JobParameterRow",
    "JobRow",
    "JobTaskRow",
    "PolicyRuleRow",
    "QualityRuleRow",
    "RouteRow",
    "SchemaRuleRow",
    "SourceColumnRow",
    "SourceObjectRow",
    "SourceSystemRow",
    "TargetRow",
]
