"""The plain-data shapes that remain at the boundaries, each named once with its reason (pure).

Everything inside the control plane and the engine travels as typed records (definitions in
`store/records.py`, runtime rows in `store/runtime_rows.py`, decisions in `evidence.py`). What
is left untyped is data whose shape belongs to someone else:
"""

from __future__ import annotations

from typing import Any

# A row as delta-rs reads or takes it: values by column name. The store's own boundary; typed
# records are built from it in one place (`from_row`), and rows to write come from them.
StoredRow = dict[str, Any]
# A JSON object as parsed or about to be written: a Delta schema or field, a commit's tag, a
# stored rule's parameters, an error's details for `--json`. Its shape is its format's.
JsonObject = dict[str, Any]
