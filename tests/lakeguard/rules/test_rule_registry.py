"""Rule kinds are typed classes found in one registry (pure): a stored rule parses back into its
class, the registry refuses to load incomplete, and the newest kind works end to end."""

from __future__ import annotations

import json

import pytest

from lakeguard.records.definitions.records import RuleDef
from lakeguard.rules.catalog.loader import validate_text
from lakeguard.rules.quality import kinds
from lakeguard.rules.quality.kinds import RULE_KINDS, parse_rule, stored_rule
from lakeguard.rules.quality.kinds.not_empty_string import NotEmptyStringRule
from lakeguard.rules.quality.rules import compile_rule
from lakeguard.words.errors import ValidationError
from lakeguard.words.vocabulary import DECLARABLE_RULE_TYPES


def stored(rule_type: str, **params: object) -> RuleDef:
    return RuleDef(
        rule_id="r1",
        dataset_id="d",
        rule_type=rule_type,
        severity="WARN",
        rule_expression=json.dumps(params),
    )


def test_every_rule_type_has_exactly_one_kind_class() -> None:
    assert sorted(RULE_KINDS) == sorted(DECLARABLE_RULE_TYPES)
    assert len({k.__module__ for k in RULE_KINDS.values()}) == len(RULE_KINDS)


def test_a_kind_module_left_out_of_the_registry_stops_the_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    without = tuple(k for k in kinds.KINDS if k is not NotEmptyStringRule)
    monkeypatch.setattr(kinds, "KINDS", without)
    monkeypatch.setattr(kinds, "RULE_KINDS", {kinds._type_name(k): k for k in without})
    with pytest.raises(RuntimeError) as info:
        kinds._check_registry()
    assert "kinds/not_empty_string.py is not in KINDS" in str(info.value)
    assert "rule type NOT_EMPTY_STRING has no kind class" in str(info.value)


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "NOT_NULL", "columns": ["a", "b"]},
        {"type": "RANGE", "column": "x", "min": 0, "threshold": 0.1},
        {"type": "UNIQUE", "columns": ["k"]},
        {"type": "REGEX", "column": "x", "pattern": "^a+$"},
        {"type": "ALLOWED_VALUES", "column": "x", "values": ["A", 1, True]},
        {"type": "EXPRESSION", "expression": "a >= b"},
        {"type": "ROW_COUNT", "max": 10},
        {"type": "FOREIGN_KEY", "columns": ["c"], "references": "other", "ref_columns": ["id"]},
        {"type": "FRESHNESS", "column": "t", "max_age": "2 days"},
        {"type": "AGGREGATE", "expression": "sum(a) > 0"},
        {"type": "NOT_EMPTY_STRING", "column": "name"},
    ],
)
def test_a_stored_rule_is_the_same_typed_spec_as_declared(spec: dict[str, object]) -> None:
    declared = parse_rule({"id": "r1", "dataset": "d", "severity": "WARN", **spec})
    row = stored(declared.rule_type, **declared.parameters())
    assert stored_rule(row) == declared  # parsed back into its class, not re-read by keys
    assert declared.explain()


def test_parameters_that_do_not_fit_the_kind_say_what_it_needs() -> None:
    with pytest.raises(ValidationError, match="needs 'column'") as info:
        compile_rule(stored("NOT_EMPTY_STRING", columns=["name"]))
    assert "quality_rules[rule_id=r1]" in info.value.errors[0]["path"]


def test_not_empty_string_flags_empty_and_blank_text_only() -> None:
    compiled = compile_rule(stored("NOT_EMPTY_STRING", column="name"))
    assert compiled.row_level and compiled.columns == ("name",)
    assert compiled.violation_sql == ("(`name` IS NOT NULL AND trim(CAST(`name` AS STRING)) = '')")


def test_not_empty_string_is_checked_at_validate_and_written_under_a_column() -> None:
    doc = """
version: 1
source_systems: [{id: s}]
source_objects:
  - id: o
    system: s
    locator: "*.csv"
    dataset: b
    columns:
      - {name: name, type: string, rules: [{type: NOT_EMPTY_STRING, severity: WARN}]}
datasets: [{id: b, layer: bronze}]
rules:
  - {id: r_blank, dataset: b, type: NOT_EMPTY_STRING, column: nmae}
"""
    with pytest.raises(ValidationError) as info:
        validate_text(doc, "doc.yaml")
    messages = [e["message"] for e in info.value.errors]
    assert messages == ["column 'nmae' is not a column of b"]
    good = validate_text(doc.replace("column: nmae", "column: name"), "doc.yaml")
    kinds_found = {r.id: r.rule_type for r in good.all_rules}
    assert kinds_found == {
        "r_blank": "NOT_EMPTY_STRING",
        "o_name_not_empty_string": "NOT_EMPTY_STRING",
    }
