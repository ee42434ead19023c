"""Row-count, foreign-key, freshness and aggregate rules, column-level rule sets and the fail
behaviours (quarantine, drop, abort): compiled and decided without Spark, then on real runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lakeguard.actors.gate import decide
from lakeguard.records.definitions.records import DatasetDef, RuleDef, Transform
from lakeguard.records.quality.outcome import RuleOutcome
from lakeguard.records.sources.records import SourceObjectDef
from lakeguard.rules.catalog.loader import load_file
from lakeguard.rules.quality.evaluate import evaluate_row_count, implied_unique
from lakeguard.rules.quality.fail_behavior import droppable, fail_behavior
from lakeguard.rules.quality.rules import compile_rule
from lakeguard.words.errors import UnsafeExpressionError, ValidationError
from tests.support.project import Project, assert_sound, cells_yaml, write


def rule(rule_type: str, **params: object) -> RuleDef:
    return RuleDef(
        rule_id=f"r_{rule_type.lower()}",
        dataset_id="d",
        rule_type=rule_type,
        severity="FAIL",
        rule_expression=json.dumps(params),
    )


def test_a_unique_rule_is_implied_only_by_uniqueness_on_some_of_its_keys() -> None:
    unique = compile_rule(rule("UNIQUE", columns=["radio", "Cell"]))
    assert implied_unique(unique, ("radio", "cell"))  # a merge deduped on exactly them
    assert implied_unique(unique, ("cell",))  # unique on fewer columns: unique on more
    assert not implied_unique(unique, ())  # no dedupe: the groupBy runs
    assert not implied_unique(unique, ("radio", "mcc"))  # deduped on other columns
    assert not implied_unique(compile_rule(rule("NOT_NULL", columns=["cell"])), ("cell",))


def test_batch_level_rules_compile_to_bounds_aggregates_and_references() -> None:
    bounds = compile_rule(rule("ROW_COUNT", min=2, max=5))
    assert bounds.row_bounds == (2, 5) and not bounds.row_level
    assert [evaluate_row_count(bounds, n).outcome for n in (1, 2, 5, 6)] == [
        "FAIL",
        "PASS",
        "PASS",
        "FAIL",
    ]
    assert evaluate_row_count(bounds, 0).failed_rows == 1  # an empty batch still fails it
    aggregate = compile_rule(rule("AGGREGATE", expression="sum(amount) > 0 -- comment"))
    assert aggregate.aggregate_sql == "SUM(amount) > 0"  # the re-rendered tree, not the text
    fk = compile_rule(rule("FOREIGN_KEY", columns=["cell"], references="cells", ref_columns=["id"]))
    assert fk.reference == ("cells", ("cell",), ("id",)) and not fk.row_level
    fresh = compile_rule(rule("FRESHNESS", column="seen", max_age="2 days"))
    assert fresh.row_level
    assert "make_dt_interval(0, 0, 0, 172800)" in (fresh.violation_sql or "")


@pytest.mark.parametrize(
    "rule_type, params, message",
    [
        ("ROW_COUNT", {}, "needs 'min', 'max' or both"),
        ("FOREIGN_KEY", {"columns": ["a"]}, "needs 'columns', 'references'"),
        ("FRESHNESS", {"column": "t", "max_age": "soon"}, "needs 'max_age'"),
        ("AGGREGATE", {}, "needs 'expression'"),
    ],
)
def test_bad_parameters_of_the_new_kinds_are_reported(
    rule_type: str, params: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        compile_rule(rule(rule_type, **params))


def test_an_aggregate_condition_is_vetted_like_any_sql() -> None:
    with pytest.raises(UnsafeExpressionError, match="reflect"):
        compile_rule(rule("AGGREGATE", expression="max(reflect('java.lang.Runtime', 'x')) > 0"))


def test_which_fail_behaviour_applies() -> None:
    def obj(i: int, behavior: str) -> SourceObjectDef:
        return SourceObjectDef(
            source_object_id=f"o{i}",
            source_system_id="s",
            locator="*.csv",
            format="csv",
            dataset_id="b",
            fail_behavior=behavior,
        )

    bronze = DatasetDef(dataset_id="b", dataset_name="b", layer="bronze", table_name="bronze.b")
    assert fail_behavior(bronze, [obj(1, "drop"), obj(2, "drop")]) == "drop"
    assert fail_behavior(bronze, [obj(1, "drop"), obj(2, "quarantine")]) == "quarantine"
    assert fail_behavior(bronze, [obj(1, "drop"), obj(2, "abort")]) == "abort"
    full = DatasetDef(
        dataset_id="b", dataset_name="b", layer="bronze", table_name="bronze.b", load_type="full"
    )
    assert fail_behavior(full, [obj(1, "drop")]) == "quarantine"  # a dropped row = a deletion
    silver = DatasetDef(
        dataset_id="s",
        dataset_name="s",
        layer="silver",
        table_name="silver.s",
        transform=Transform(fail_behavior="abort"),
    )
    assert fail_behavior(silver, [obj(1, "drop")]) == "abort"  # its own setting
    rules = [
        compile_rule(rule("RANGE", column="lat", min=0, max=1)),
        compile_rule(rule("ROW_COUNT", min=1)),
        compile_rule(RuleDef(**{**vars_of(rule("NOT_NULL", columns=["a"])), "severity": "WARN"})),
    ]
    assert droppable(rules, "drop") == {"r_range"}  # row-level FAIL rules only
    assert droppable(rules, "quarantine") == frozenset()


def vars_of(row: RuleDef) -> dict[str, Any]:
    return {k: getattr(row, k) for k in ("rule_id", "dataset_id", "rule_type", "rule_expression")}


def test_drop_behaviour_turns_row_failures_into_a_promotion_with_dropped_rows() -> None:
    row = RuleOutcome("lat", "RANGE", "FAIL", ("lat",), 10, 2, 0.0)
    batch = RuleOutcome("rows", "ROW_COUNT", "FAIL", (), 10, 10, 0.0)
    allowed = decide([row], from_layer="source", to_layer="bronze", droppable=frozenset({"lat"}))
    assert allowed.allowed and list(allowed.evidence.dropped_rules) == ["lat"]
    assert "dropped to quarantine" in allowed.reason
    # a batch-level breach is never droppable: the batch is blocked whatever the behaviour
    blocked = decide(
        [row, batch], from_layer="source", to_layer="bronze", droppable=frozenset({"lat"})
    )
    assert not blocked.allowed and "rows" in blocked.reason


def test_rules_written_under_a_column_become_rules_of_its_dataset(tmp_path: Path) -> None:
    text = cells_yaml().replace(
        "{name: radio, type: string}",
        "{name: radio, type: string, rules: [{type: NOT_NULL}, "
        "{type: ALLOWED_VALUES, values: [GSM, LTE], severity: WARN}]}",
    )
    text = text.replace(
        "{name: lat, type: double}",
        "{name: lat, type: double, rules: [{type: RANGE, min: -90, max: 90, id: lat_ok}]}",
    )
    doc = load_file(write(tmp_path / "m.yaml", text))
    ids = {r.id: r for r in doc.all_rules if r.dataset == "bronze_cells"}
    assert set(ids) >= {"cells_csv_radio_not_null", "cells_csv_radio_allowed_values", "lat_ok"}
    assert ids["cells_csv_radio_not_null"].columns == ["radio"]
    assert ids["lat_ok"].column == "lat" and ids["lat_ok"].min == -90
    assert ids["cells_csv_radio_allowed_values"].severity == "WARN"


def test_a_column_rule_without_its_parameters_is_located(tmp_path: Path) -> None:
    text = cells_yaml().replace(
        "{name: lat, type: double}", "{name: lat, type: double, rules: [{type: RANGE}]}"
    )
    with pytest.raises(ValidationError) as info:
        load_file(write(tmp_path / "m.yaml", text))
    assert "source_objects[0].columns[2].rules[0]" in str(info.value)


def test_a_foreign_key_to_an_unknown_dataset_or_column_is_refused(tmp_path: Path) -> None:
    text = cells_yaml().replace(
        "rules:\n",
        "rules:\n  - {id: fk, dataset: silver_cells, type: FOREIGN_KEY, columns: [cell], "
        "references: nowhere}\n"
        "  - {id: fk2, dataset: bronze_cells, type: FOREIGN_KEY, columns: [cell], "
        "references: bronze_cells, ref_columns: [missing]}\n",
    )
    with pytest.raises(ValidationError) as info:
        load_file(write(tmp_path / "m.yaml", text))
    text_of = str(info.value)
    assert "rules[0].references" in text_of and "unknown dataset 'nowhere'" in text_of
    assert "'missing' is not a column of bronze_cells" in text_of


def test_drop_is_refused_where_a_batch_is_the_whole_dataset(tmp_path: Path) -> None:
    text = cells_yaml().replace(
        "    max_malformed_ratio: 0.2\n", "    max_malformed_ratio: 0.2\n    fail_behavior: drop\n"
    )
    text = text.replace(
        "    table: bronze.cells\n", "    table: bronze.cells\n    load_type: full\n"
    )
    text = text.replace(
        "    sequence_by: updated\n",
        "    sequence_by: updated\n    delete_missing: soft\n    fail_behavior: drop\n",
    )
    with pytest.raises(ValidationError) as info:
        load_file(write(tmp_path / "m.yaml", text))
    shown = str(info.value)
    assert "source_objects[0].fail_behavior" in shown and "datasets[1].fail_behavior" in shown
    assert "a dropped row would be deleted" in shown


def test_an_aggregate_rule_needs_an_aggregate(tmp_path: Path) -> None:
    text = cells_yaml().replace(
        "rules:\n",
        'rules:\n  - {id: agg, dataset: bronze_cells, type: AGGREGATE, expression: "lat > 0"}\n',
    )
    with pytest.raises(ValidationError, match="needs an aggregate"):
        load_file(write(tmp_path / "m.yaml", text))
    with pytest.raises(ValidationError, match="needs an aggregate"):
        compile_rule(rule("AGGREGATE", expression="lat > 0"))


def with_rules(p: Project, rules: str, **replace: str) -> None:
    text = p.yaml.read_text().replace("rules:\n", "rules:\n" + rules)
    for old, new in replace.items():
        text = text.replace(old, new)
    p.yaml.write_text(text)


@pytest.mark.spark
def test_drop_promotes_the_good_rows_and_quarantines_the_failing_ones(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    with_rules(
        p,
        "",
        **{"max_malformed_ratio: 0.2": "max_malformed_ratio: 0.2\n    fail_behavior: drop"},
    )
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.5,100", "LTE,2,95.0,100", "GSM,3,-91,100", "LTE,4,1.0,100"])
    result = lh.run(p.bronze)
    (step,) = result.steps
    assert result.status == "COMPLETED" and step.status == "SUCCESS"
    assert step.quarantined == 2
    assert sorted(r["cell"] for r in lh.read(p.bronze).collect()) == [1, 4]
    held = lh.sql(f"SELECT cell, _laketx_failed_rules AS rules FROM quarantine.{p.bronze}")
    assert sorted((r["cell"], r["rules"]) for r in held.collect()) == [
        (2, [f"lat_range{p.suffix}"]),
        (3, [f"lat_range{p.suffix}"]),
    ]
    decision = lh.explain(p.bronze)
    assert decision.allowed and list(decision.evidence.dropped_rules) == [f"lat_range{p.suffix}"]
    assert decision.evidence.fail_behavior == "drop"
    versions = lh.sql(
        f"SELECT row_count FROM lakeguard.data_versions WHERE dataset_id = '{p.bronze}'"
    ).collect()
    assert [v["row_count"] for v in versions] == [2]
    assert decision.evidence.dropped_rows == 2
    assert lh.replay(p.bronze, 1).matches  # the recorded hash covers the promoted rows only

    # Dropping every row would promote nothing: the batch is blocked instead.
    p.deliver("d2.csv", ["GSM,5,95.0,100", "LTE,6,-95.0,100"])
    nothing = lh.run(p.bronze).steps[0]
    assert nothing.status == "BLOCKED" and "nothing_left" in (nothing.reason or "")
    # The malformed-row budget is never dropped: too many unparseable lines still block.
    p.deliver("d3.csv", ["GSM,7,1.0,100", "LTE,x,y,z", "GSM,y,z,w", "LTE,8,95.0,100"])
    broken = lh.run(p.bronze).steps[0]
    assert broken.status == "BLOCKED" and "_malformed_rows" in (broken.reason or "")
    assert_sound(lh, p.bronze)


@pytest.mark.spark
def test_abort_stops_the_whole_job(shared_lakehouse: Any, project: Project) -> None:
    lh, p = shared_lakehouse, project
    with_rules(
        p,
        "",
        **{"max_malformed_ratio: 0.2": "max_malformed_ratio: 0.2\n    fail_behavior: abort"},
    )
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.5,100", "LTE,2,95.0,100"])
    result = lh.run(p.job)
    assert result.status == "FAILED" and result.exit_code == 8
    assert [s.status for s in result.steps] == ["BLOCKED"]
    assert result.skipped == [p.silver]
    assert "fail_behavior: abort" in (result.error or "")
    versions = lh.sql(f"SELECT * FROM lakeguard.data_versions WHERE dataset_id = '{p.bronze}'")
    assert versions.count() == 0
    assert_sound(lh, p.bronze, p.silver)


@pytest.mark.spark
def test_row_count_foreign_key_freshness_and_aggregate_rules_on_real_runs(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    s = p.suffix
    with_rules(
        p,
        f"  - {{id: enough{s}, dataset: bronze_cells{s}, type: ROW_COUNT, min: 2, max: 4}}\n"
        f"  - {{id: known_cell{s}, dataset: silver_cells{s}, type: FOREIGN_KEY, columns: [cell], "
        f"references: bronze_cells{s}}}\n"
        f"  - {{id: in_silver{s}, dataset: bronze_cells{s}, type: FOREIGN_KEY, columns: [cell], "
        f"references: silver_cells{s}, severity: WARN}}\n"
        f"  - {{id: lat_sum{s}, dataset: silver_cells{s}, type: AGGREGATE, "
        f'expression: "sum(lat) > 0 AND count(DISTINCT radio) >= 2"}}\n'
        f"  - {{id: recent{s}, dataset: silver_cells{s}, type: FRESHNESS, column: seen, "
        f'max_age: "30 days", severity: WARN}}\n',
        **{
            'filter: "cell IS NOT NULL"': 'filter: "cell IS NOT NULL"\n'
            "    columns: {radio: radio, cell: cell, lat: lat, updated: updated, "
            'seen: "timestamp_seconds(updated)"}'
        },
    )
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.5,100"])
    first = lh.run(p.job)
    assert first.steps[0].status == "BLOCKED"  # one row, below the minimum of 2
    assert f"enough{s}" in (first.steps[0].reason or "")
    p.deliver("d2.csv", ["GSM,1,10.5,100", "LTE,2,-1.0,1900000000"])
    second = lh.run(p.job)
    assert [st.status for st in second.steps] == ["SUCCESS", "SUCCESS"]
    # silver has no approved snapshot yet: no key can be found in it
    assert {o.rule_id: o.failed_rows for o in second.steps[0].outcomes}[f"in_silver{s}"] == 2
    outcomes = {o.rule_id: o for o in second.steps[1].outcomes}
    assert outcomes[f"known_cell{s}"].outcome == "PASS"
    assert outcomes[f"lat_sum{s}"].outcome == "PASS"
    assert outcomes[f"recent{s}"].failed_rows == 1  # 1970 is more than 30 days old
    assert outcomes[f"recent{s}"].outcome == "WARN"
    p.deliver("d3.csv", ["GSM,3,-50.0,100", "GSM,4,1.0,100"])
    third = lh.run(p.job)
    assert third.steps[0].status == "SUCCESS"
    # cells 3 and 4 are not in silver's approved snapshot (cells 1 and 2)
    bronze_outcomes = {o.rule_id: o for o in third.steps[0].outcomes}
    assert bronze_outcomes[f"in_silver{s}"].failed_rows == 2
    silver = third.steps[1]
    assert silver.status == "BLOCKED"
    # the foreign key holds (bronze was approved first), the aggregate does not
    assert f"lat_sum{s}" in (silver.reason or "")
    assert_sound(lh, p.bronze, p.silver)
