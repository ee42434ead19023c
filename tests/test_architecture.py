"""The contract between the packages (DESIGN.md §2), machine-checked."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.mark.subprocess
def test_import_linter_contract_lakeguard_never_imports_openlaketx() -> None:
    exe = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(exe)], capture_output=True, text=True, cwd=SRC.parent, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_no_lakeguard_module_mentions_openlaketx_imports() -> None:
    for path in (SRC / "lakeguard").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("openlaketx"), path
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("openlaketx") for a in node.names), path


def test_openlaketx_never_writes_decisions_versions_or_definitions() -> None:
    """Invariant 10: the engine reads definitions and asks the gate; it never writes them.

    Rows reach a table as typed rows (`lakeguard.store.runtime_rows`) through `RunWriter`,
    whose store refuses the gate's tables; so the engine must not name the gate's row types,
    impersonate the gate, upsert, or name a gate table in any string, wherever it is held.
    """
    forbidden_names = {"DecisionRow", "DataVersionRow"}
    forbidden_tables = {"promotion_status", "data_versions"}
    for path in (SRC / "openlaketx").rglob("*.py"):
        tree = ast.parse(path.read_text())
        # an error may say where it is about (`where="data_versions"`): that names, not writes
        said = {
            id(k.value) for k in ast.walk(tree) if isinstance(k, ast.keyword) and k.arg == "where"
        }
        for node in ast.walk(tree):
            if id(node) in said:
                continue
            if isinstance(node, ast.Name | ast.alias):
                name = node.id if isinstance(node, ast.Name) else node.name
                assert name not in forbidden_names, f"{path}: builds {name} rows"
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                named = {t for t in forbidden_tables if t == node.value.strip().lower()}
                assert not named, f"{path}: names {named} (held anywhere, it may be written)"
            if isinstance(node, ast.keyword):
                assert node.arg != "_by_gate", f"{path}: impersonates the gate"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                assert node.func.attr != "upsert", f"{path}: the engine must not upsert"


def test_the_writer_refuses_the_gate_tables_whatever_it_is_handed(tmp_path: Path) -> None:
    from datetime import datetime

    import pytest

    from lakeguard.errors import MetadataStoreError
    from lakeguard.store import MetadataStore, RunWriter
    from lakeguard.store.runtime_rows import DecisionRow

    store = MetadataStore("lg", str(tmp_path / "meta"), "default")
    store.ensure()
    row = DecisionRow(
        tenant_id="default",
        dataset_id="d",
        run_id="r",
        from_layer="source",
        to_layer="bronze",
        allowed=True,
        reason="forged",
        evaluated_at=datetime(2026, 1, 1),
    )
    with pytest.raises(MetadataStoreError, match="gate only"):
        RunWriter(store).append([row])
    assert store.rows("promotion_status") == []


def test_every_runtime_row_type_matches_its_table() -> None:
    from dataclasses import fields

    from lakeguard.store import table_def
    from lakeguard.store.runtime_rows import ROW_TYPES

    for row_type in ROW_TYPES:
        table = table_def(row_type.TABLE)
        assert table.append_only, row_type.TABLE
        assert {f.name for f in fields(row_type)} == {c.name for c in table.writable_columns}


@pytest.mark.subprocess
def test_every_pure_module_imports_without_spark() -> None:
    """Every module of the control plane but its one Spark edge loads without pyspark."""
    import pkgutil

    import lakeguard

    edge = {"lakeguard.quality.evaluate"}
    modules = [
        m.name
        for m in pkgutil.walk_packages(lakeguard.__path__, "lakeguard.")
        if m.name not in edge
    ]
    assert len(modules) > 40
    code = (
        "import sys, importlib\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "assert 'pyspark' not in sys.modules, [m for m in sys.modules if 'pyspark' in m]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
