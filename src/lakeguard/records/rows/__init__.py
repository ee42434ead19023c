"""The row machinery (pure): every metadata table is declared by its typed row class.

A class's fields are its table's columns, in order, with their types, nullability, comments and
(in a definition row) defaults; its `TABLE` is the rest (name, comment and upsert keys for a
definition table; date partition and Z-order columns for a runtime table): `schema.py` reads
the table off the class, and `lakeguard.records.table_defs` lists every table. A field with a
default is the column's one default: a NULL stored there (a direct SQL edit, a column added
later) reads as it, in a run, an export and the API alike, and the document's model takes its
default from the field. Fields with a vocabulary carry its type. Writers append these rows,
never a table name plus a dict; the reader reads full rows back as them (`from_row`), and the
typed records parse their JSON-in-STRING columns once (`parsing.py`).

The row classes sit with their concept (`lakeguard.records.runs`, `.decisions`, `.checks`,
`.definitions`, `.sources`, `.alerts`, `.upkeep`); `definition.py` and `runtime.py` are their
bases."""
