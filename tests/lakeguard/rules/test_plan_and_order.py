"""Planning of applies and of job task order (no Spark)."""

from __future__ import annotations

import pytest

from lakeguard.records.definitions.sets import DefinitionSet
from lakeguard.rules.catalog.loader import validate_text
from lakeguard.rules.catalog.plan import plan_changes
from lakeguard.rules.catalog.to_rows import document_rows
from lakeguard.words.planning import CycleError, order_tasks
from tests.support.project import cells_yaml

CELLS_YAML = cells_yaml()


def test_tasks_run_after_their_dependencies_in_declaration_order() -> None:
    assert order_tasks({"a": [], "b": ["c"], "c": ["a"], "d": []}) == ["a", "d", "c", "b"]
    with pytest.raises(CycleError):
        order_tasks({"a": ["b"], "b": ["a"]})


def test_plan_detects_create_update_unchanged_and_immutable_fields() -> None:
    rows = document_rows(validate_text(CELLS_YAML))
    first = plan_changes(rows, DefinitionSet())
    assert first.count("create") == sum(len(r) for _, r in rows.tables())
    same = plan_changes(rows, rows)
    assert not same.has_changes and not same.conflicts

    edited = validate_text(CELLS_YAML.replace("severity: WARN", "severity: FAIL"))
    changed = plan_changes(document_rows(edited), rows)
    assert [(c.table, c.key) for c in changed.changes if c.action == "update"] == [
        ("quality_rules", ("radio_known",))
    ]
    moved = validate_text(CELLS_YAML.replace("table: silver.cells", "table: silver.cells2"))
    conflict = plan_changes(document_rows(moved), rows)
    assert conflict.conflicts and "table_name" in conflict.conflicts[0]["path"]


def test_definition_hash_is_stable() -> None:
    a = document_rows(validate_text(CELLS_YAML))
    b = document_rows(validate_text(CELLS_YAML))
    assert a == b
