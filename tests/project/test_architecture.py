"""The contract between the packages (docs/design.md §2) and the shape of their imports,
machine-checked."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
import tomllib
from pathlib import Path

import grimp
import pytest

from tests.support.import_cycles import import_map, module_cycles

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
    "contracts"
]


@pytest.mark.subprocess
def test_import_linter_contracts_are_kept() -> None:
    """The package boundary, the layers inside each package and no import cycle (pyproject)."""
    exe = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(exe)], capture_output=True, text=True, cwd=ROOT, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{len(CONTRACTS)} kept, 0 broken" in result.stdout


def test_no_import_cycle_between_any_two_modules() -> None:
    """Every import counts: at the top, in a function, under TYPE_CHECKING."""
    cycles = module_cycles(import_map(grimp.build_graph("lakeguard", "openlaketx")))
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_two_lakeguard_packages_import_each_other() -> None:
    """Under each package of lakeguard its subpackages and modules import one another one way
    only: no circle among siblings, even one no two modules close (as store <-> catalog was)."""
    graph = grimp.build_graph("lakeguard")
    imports = import_map(graph)
    circles: list[list[str]] = []
    for package in sorted(m for m in graph.modules if graph.find_children(m)):
        children = sorted(graph.find_children(package))

        def sibling(module: str, children: list[str] = children) -> str | None:
            return next((c for c in children if module == c or module.startswith(f"{c}.")), None)

        folded: dict[str, set[str]] = {c: set() for c in children}
        for module, targets in imports.items():
            if (own := sibling(module)) is not None:
                folded[own] |= {t for t in map(sibling, targets) if t not in (None, own)}
        circles += module_cycles(folded)
    assert not circles, "packages importing each other:\n" + "\n".join(
        " -> ".join(c) for c in circles
    )


def test_lakeguard_folders_are_its_layers() -> None:
    """Every module of lakeguard sits in a folder that is one of its layers (the contract is
    exhaustive over the package, as openlaketx's is): only the package's own __init__ stays at
    the top, beside the layer folders."""
    (contract,) = [c for c in CONTRACTS if c.get("containers") == ["lakeguard"]]
    assert contract["type"] == "layers"
    assert contract["exhaustive"] is True
    layers = {n.strip() for layer in contract["layers"] for n in re.split(r"[:|]", layer)}
    top = SRC / "lakeguard"
    folders = {p.name for p in top.iterdir() if (p / "__init__.py").is_file()}
    modules = sorted(p.name for p in top.glob("*.py") if p.name != "__init__.py")
    assert not modules, f"move these into the folder of their layer: {modules}"
    assert folders == layers, f"folders {sorted(folders)} are not the layers {sorted(layers)}"


_PRAGMA = re.compile(r"noqa(:\s*[A-Z]+[0-9]+(\s*,\s*[A-Z]+[0-9]+)*)?|type:\s*ignore(\[[^]]*])?")


def _explanations(text: str) -> set[int]:
    """Lines holding a comment that says something (not just a pragma such as noqa)."""
    return {
        tok.start[0]
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT and re.search(r"[A-Za-z]", _PRAGMA.sub("", tok.string))
    }


def _function_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import | ast.ImportFrom):
                found.append(child)
            walk(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    walk(tree, False)
    return sorted(found, key=lambda n: n.lineno)


def unexplained_imports(path: Path) -> list[int]:
    """Lines of imports inside functions with no comment on them, on the line above, or above
    the run of imports they directly follow."""
    text = path.read_text()
    lines = text.splitlines()
    said = _explanations(text)
    explained_ends: set[int] = set()
    bad = []
    for node in _function_imports(ast.parse(text)):
        above = node.lineno - 1
        end = node.end_lineno or node.lineno
        if (
            said & set(range(node.lineno, end + 1))
            or (above in said and lines[above - 1].lstrip().startswith("#"))
            or above in explained_ends
        ):
            explained_ends.add(end)
        else:
            bad.append(node.lineno)
    return bad


def test_every_import_inside_a_function_says_why() -> None:
    """An import inside a function hides a dependency: it must say why it is not at the top
    (start-up time: pyspark and the like load on first use; or another genuine reason)."""
    found = {
        path.relative_to(SRC).as_posix(): unexplained_imports(path)
        for path in sorted(SRC.rglob("*.py"))
    }
    offending = [f"src/{name}:{line}" for name, lines in found.items() for line in lines]
    assert not offending, "imports inside functions without a comment saying why:\n" + "\n".join(
        offending
    )


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

    Rows reach a table as typed rows (`lakeguard.records`) through `RunWriter`,
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

    from lakeguard.records.decisions.rows import DecisionRow
    from lakeguard.store import MetadataStore, RunWriter
    from lakeguard.words.errors import MetadataStoreError

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


@pytest.mark.subprocess
def test_every_pure_module_imports_without_spark() -> None:
    """Every module of the control plane but its one Spark edge loads without pyspark."""
    import pkgutil

    import lakeguard

    edge = {"lakeguard.rules.quality.evaluate"}
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
