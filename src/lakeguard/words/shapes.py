"""The plain-data shapes that remain at the boundaries, each named once with its reason (pure).

Everything inside the control plane and the engine travels as typed records (definition rows
and runtime rows, and what runs them, in the concept folders of `records/`, decisions in
`records/evidence.py`). What is left untyped is data whose shape belongs to someone else:
"""

from __future__ import annotations

from typing import Any

# A row as delta-rs reads or takes it: values by column name. The store's own boundary: a row
# becomes its row class there (`MetadataStore.read` and `definitions`, `from_row`/`as_row` of
# `RuntimeRow` and `DefinitionRow`); what stays plain is a projection of a few columns, a
# join's answer, and a store migration's rewrite of rows of an older schema.
StoredRow = dict[str, Any]
# A JSON object as parsed or about to be written: a Delta schema or field, a commit's tag, a
# stored rule's parameters, an error's details for `--json`. Its shape is its format's.
JsonObject = dict[str, Any]
