"""The one plain-data shape left at a boundary, named once with its reason (pure).

Everything inside the control plane and the engine travels as typed records (definition rows
and runtime rows, and what runs them, in the concept folders of `records/`, decisions in
`records/evidence.py`). JSON whose shape is a format's has its TypedDict (a Delta schema in
`records/schema/delta_json.py`, evidence, errors, table documents); JSON whose shape is the
user's (a rule's parameters, a document's entries, a dataset's rows) is pydantic's
`JsonValue`. What is left untyped is a row on its way in or out of delta-rs:
"""

from __future__ import annotations

from typing import Any

# A row as delta-rs reads or takes it: values by column name. The store's own boundary: a row
# becomes its row class there (`MetadataStore.read` and `definitions`, `from_row`/`as_row` of
# `RuntimeRow` and `DefinitionRow`); what stays plain is a projection of a few columns read by
# `MetadataStore.rows`, the snapshot cache's kept answers, a join's answer before its fold
# types it, and a store migration's rewrite of rows of an older schema.
StoredRow = dict[str, Any]
