"""The contract between the packages (DESIGN.md §2), machine-checked."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


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
    """Invariant 10: the engine reads definitions and asks the gate; it never writes them."""
    forbidden_targets = {"promotion_status", "data_versions"}
    for path in (SRC / "openlaketx").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            if node.func.attr == "upsert":
                raise AssertionError(f"{path}: the engine must not upsert definitions")
            if node.func.attr in ("append", "append_many"):
                for arg in ast.walk(node):
                    if isinstance(arg, ast.Constant) and arg.value in forbidden_targets:
                        raise AssertionError(f"{path}: writes {arg.value} directly")
                for kw in node.keywords:
                    assert kw.arg != "_by_gate", f"{path}: impersonates the gate"


def test_pure_modules_do_not_need_spark() -> None:
    code = (
        "import sys\n"
        "import lakeguard.catalog.loader, lakeguard.catalog.plan, lakeguard.quality.rules, "
        "lakeguard.gate, lakeguard.planning, lakeguard.sqlsafety, lakeguard.store.ddl\n"
        "assert 'pyspark' not in sys.modules, [m for m in sys.modules if 'pyspark' in m]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
