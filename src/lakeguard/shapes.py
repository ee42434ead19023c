"""The plain-data shapes that remain at the boundaries, each named once with its reason (pure).

Everything inside the control plane and the engine travels as typed records (definitions in
`store/records/`, runtime rows in `store/runtime_rows/`, decisions in `evidence.py`). What
is left untyped is data whose shape belongs to someone else:
"""

from __future__ import annotations

from typing import Any

# A row as delta-rs reads or takes it: values by column name. The store's own boundary: a
# runtime row becomes its row class there (`MetadataStore.read`, `RuntimeRow.from_row`/`as_row`);
# what stays plain is a definition row (no row class: documents and SQL edits make them, and
# `records/`, `catalog/` and `keys.py` read them into typed records or documents), a
# projection of a few columns, and a store migration's rewrite of rows of an older schema.
StoredRow = dict[str, Any]
# A JSON object as parsed or about to be written: a Delta schema or field, a commit's tag, a
# stored rule's parameters, an error's details for `--json`. Its shape is its format's.
JsonObject = dict[str, Any]
