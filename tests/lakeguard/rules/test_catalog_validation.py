"""Metadata-as-code validation: every error with its path and line, nothing written (no Spark)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from lakeguard.rules.catalog.loader import load_file, validate_text
from lakeguard.words.errors import ValidationError


def errors_of(text: str) -> list[dict[str, str]]:
    with pytest.raises(ValidationError) as info:
        validate_text(text, "doc.yaml")
    return info.value.errors


def test_the_demo_document_is_valid() -> None:
    text = resources.files("openlaketx.demo").joinpath("cell_towers.yaml").read_text()
    doc = validate_text(text)
    assert {d.layer.value for d in doc.datasets} == {"bronze", "silver"}
    assert {r.type for r in doc.rules} >= {"NOT_NULL", "RANGE", "UNIQUE", "REGEX", "ALLOWED_VALUES"}


def test_malformed_yaml_reports_line_and_column() -> None:
    errs = errors_of("datasets:\n  - id: a\n    layer: [bronze\n")
    assert errs[0]["path"].startswith("doc.yaml:")
    file, line, column = errs[0]["path"].split(":")
    assert (file, line, column) == ("doc.yaml", "4", "1")  # where the list is left open


def test_every_model_error_is_reported_with_path_and_line() -> None:
    errs = errors_of(
        """
datasets:
  - id: b
    layer: bronze
    colour: blue
rules:
  - {id: r1, dataset: b, type: SOMETIMES_NULL, column: x}
  - {id: r2, dataset: b, type: RANGE, column: x, min: 5, max: 1}
  - {id: r3, dataset: b, type: NOT_NULL, columns: [a], severity: MAYBE}
"""
    )
    paths = [e["path"] for e in errs]
    assert "datasets[0].colour (line 5)" in paths
    assert any(p.startswith("rules[0]") and "line 7" in p for p in paths)
    assert any(p.startswith("rules[1].max") for p in paths)
    assert any(p.startswith("rules[2].severity") for p in paths)
    unknown_type = next(e for e in errs if e["path"].startswith("rules[0]"))
    assert "NOT_NULL" in unknown_type["message"]  # the allowed types are listed


def test_layer_rules_of_invariant_2() -> None:
    errs = errors_of(
        """
source_systems: [{id: s}]
source_objects:
  - {id: o, system: s, locator: a.csv, dataset: b, columns: [{name: x}]}
datasets:
  - {id: b, layer: bronze}
  - {id: g, layer: gold, parents: [b]}
  - {id: s1, layer: silver}
  - {id: s2, layer: silver, parents: [nope]}
"""
    )
    messages = {e["path"].split(" ")[0]: e["message"] for e in errs}
    assert "silver parent" in messages["datasets[1].parents"]
    assert "one parent" in messages["datasets[2].parents"]
    assert "unknown parent" in messages["datasets[3].parents"]


@pytest.mark.parametrize(
    "expression",
    [
        "reflect('java.lang.Runtime', 'getRuntime')",
        "java_method('java.lang.System', 'exit', 1)",
        "x IN (SELECT secret FROM lakeguard.api_keys)",
        "x > 1; DROP TABLE lakeguard.run_history",
        "my_udf(x) > 0",
        "count(*) > 1",
        "",
    ],
)
def test_hostile_sql_in_metadata_is_refused_with_its_path(expression: str) -> None:
    errs = errors_of(
        f"""
source_systems: [{{id: s}}]
source_objects:
  - {{id: o, system: s, locator: a.csv, dataset: b, columns: [{{name: x, type: int}}]}}
datasets:
  - {{id: b, layer: bronze}}
rules:
  - {{id: r, dataset: b, type: EXPRESSION, expression: "{expression}"}}
"""
    )
    assert any(e["path"].startswith("rules[0].expression") for e in errs), errs


def test_columns_named_by_rules_and_keys_must_exist() -> None:
    errs = errors_of(
        """
source_systems: [{id: s}]
source_objects:
  - {id: o, system: s, locator: a.csv, dataset: b, columns: [{name: x, type: int}]}
datasets:
  - {id: b, layer: bronze}
  - {id: s1, layer: silver, parents: [b], business_keys: [y]}
rules:
  - {id: r, dataset: b, type: RANGE, column: z, min: 0}
  - {id: r2, dataset: s1, type: EXPRESSION, expression: "w > 0"}
"""
    )
    text = " | ".join(f"{e['path']}: {e['message']}" for e in errs)
    assert "business_keys" in text and "'y'" in text
    assert "'z'" in text
    assert "unknown column(s) w" in text


def test_job_graph_cycles_unknown_tasks_and_bad_cron() -> None:
    errs = errors_of(
        """
source_systems: [{id: s}]
source_objects:
  - {id: o, system: s, locator: a.csv, dataset: b, columns: [{name: x}]}
datasets:
  - {id: b, layer: bronze}
jobs:
  - id: j
    schedule: "every day at noon"
    tasks:
      - {id: a, dataset: b, depends_on: [c]}
      - {id: c, dataset: b, depends_on: [a, zz]}
"""
    )
    text = " | ".join(f"{e['path']}: {e['message']}" for e in errs)
    assert "invalid cron" in text
    assert "cycle" in text
    assert "unknown task 'zz'" in text


def test_missing_file_is_a_validation_error(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="does not exist"):
        load_file(tmp_path / "nope.yaml")
