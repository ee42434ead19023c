"""Apply a metadata document to the control tables (the only writer of definitions)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from lakeguard.reads.reader import StoreReader
from lakeguard.records.definitions.sets import DefinitionSet
from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.rules.catalog.loader import documents_base, load_file, validate_text
from lakeguard.rules.catalog.plan import Plan, deactivated_rows, plan_changes, row_key
from lakeguard.rules.catalog.to_rows import document_rows
from lakeguard.words.errors import ValidationError

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore


def plan_file(
    store: MetadataStore,
    path: str | Path,
    warehouse: str,
    *,
    text: str | None = None,
    base_dir: Path | None = None,
) -> tuple[Plan, DefinitionSet]:
    """Validate `path` (or `text`, read from it earlier or sent under that name) and compare
    it with what is stored; writes nothing. Relative paths in it are taken from `base_dir`
    (default: a confined tenant's home, or else the file's folder); what it names is checked
    against the tenant's reach."""
    file = Path(path)
    reach = store.reach
    folder = base_dir if base_dir is not None else documents_base(file, reach)
    doc = (
        load_file(file, reach=reach, base_dir=folder)
        if text is None
        else validate_text(text, str(file), reach=reach, base_dir=folder)
    )
    rows = document_rows(doc, base_dir=folder, warehouse=warehouse)
    plan = plan_changes(rows, StoreReader(store).definitions.stored_definitions())
    return plan, rows


def apply_file(
    store: MetadataStore,
    path: str | Path,
    warehouse: str,
    *,
    text: str | None = None,
    base_dir: Path | None = None,
) -> Plan:
    """Validate, plan, refuse conflicts, then upsert only the changed rows.

    Applying the same document twice makes no commit the second time.
    """
    plan, rows = plan_file(store, path, warehouse, text=text, base_dir=base_dir)
    if plan.conflicts:
        raise ValidationError(
            f"{path} conflicts with registered metadata",
            where=str(path),
            errors=plan.conflicts,
            fix="register a new dataset id instead of changing an immutable field",
        )
    todo: dict[str, list[DefinitionRow]] = {}
    for table, table_rows in rows.tables():
        changed = {c.key for c in plan.changes if c.table == table and c.action != "unchanged"}
        if changed:
            todo[table] = [r for r in table_rows if row_key(r) in changed]
    owned = sorted({c.table for c in plan.changes if c.action == "deactivate"})
    stored = StoreReader(store).definitions.stored_definitions(owned) if owned else DefinitionSet()
    for table, gone in deactivated_rows(plan, stored).items():
        todo[table] = [*todo.get(table, []), *gone]
    # One merge commit per table; tables are independent, so they commit concurrently.
    with ThreadPoolExecutor(max_workers=4) as pool:
        for future in [pool.submit(store.upsert, t, r) for t, r in todo.items()]:
            future.result()
    return plan
