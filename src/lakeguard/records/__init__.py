"""Typed records, row classes and pure facts about them: the layer above the words, below the
store.

Grouped by concept: a concept's row classes (one per table) and its typed records sit together
(`runs/`, `decisions/`, `checks/`, `definitions/`, `sources/`, `alerts/`), over the row
machinery in `rows/`; `table_defs.py` lists every table. The engine, the gate and the facade
see the frozen records, never raw rows or DataFrames: each `from_row` takes one stored row as
its row class (a NULL in a defaulted column already its default) and parses its JSON-in-STRING
columns once; definition rows come from documents and direct SQL edits, and are checked there
and in `lakeguard.rules.catalog.recheck`.
"""
