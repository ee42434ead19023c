"""The columns a batch gets before it is staged (`batch_rows.publishable`), built in one
projection: the same columns, in the same order and with the same values, as adding them one
projection after another (digest and flags, then what reads the flags) would give, also when
the batch already has some of them; each row's list of broken rules in rule order, empty when
it breaks none."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lakeguard.quality.compiled import CompiledRule
from lakeguard.quality.evaluate import FAILED_RULES, failed_rules_sql, rule_flag_sql
from lakeguard.quality.rules import compile_rule
from lakeguard.store.ddl import sql_string
from lakeguard.store.records import DatasetDef, RuleDef
from lakeguard.vocabulary import rule_flag
from openlaketx.loads.content import DIGEST_COLUMN, row_digest_sql
from openlaketx.runner.batch import LOADED_COL, RUN_COL, VERSION_COL
from openlaketx.runner.batch_rows import publishable

pytestmark = pytest.mark.spark

DATASET = DatasetDef(dataset_id="b", dataset_name="b", layer="bronze", table_name="bronze.b")
ROWS = [(1, "a.b@x.org", 5.0), (2, "broken", -1.0), (3, None, 7.5)]


def _rules() -> list[CompiledRule]:
    def rule(rule_id: str, rule_type: str, **params: object) -> CompiledRule:
        return compile_rule(
            RuleDef(
                rule_id=rule_id,
                dataset_id="b",
                rule_type=rule_type,
                severity="WARN",
                rule_expression=json.dumps(params),
            )
        )

    return [
        rule("r_mail", "REGEX", column="email", pattern="^[^@]+@[^@]+$"),
        rule("r_amount", "RANGE", column="amount", min=0, max=10),
        rule("r_mail_nn", "NOT_NULL", columns=["email"]),
    ]


def _one_after_another(frame: Any, rules: list[CompiledRule], table: list[str]) -> Any:
    """The reference: withColumns twice, as staging built the columns before."""
    from pyspark.sql import functions as F

    present = frame.columns
    absent = [c for c in table if c not in present]
    flags = {name: F.expr(sql) for name, sql in rule_flag_sql(rules)}
    frame = frame.withColumns({DIGEST_COLUMN: F.expr(row_digest_sql(present, absent)), **flags})
    return frame.withColumns(
        {
            FAILED_RULES: F.expr(failed_rules_sql(rules)),
            VERSION_COL: F.expr("CAST(7 AS BIGINT)"),
            RUN_COL: F.expr(sql_string("run1")),
            LOADED_COL: F.expr("current_timestamp()"),
        }
    )


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (tuple(r) for r in frame.drop(LOADED_COL).collect()), key=lambda r: r[0] if r else 0
    )


@pytest.mark.parametrize("already", [(), (RUN_COL, rule_flag(1))])
def test_one_projection_adds_what_two_added(spark: Any, already: tuple[str, ...]) -> None:
    frame = spark.createDataFrame(ROWS, "id BIGINT, email STRING, amount DOUBLE")
    for name in already:  # a batch that has some of them already: replaced where they stand
        frame = frame.withColumn(name, frame["id"].cast("string"))
    rules = _rules()
    table = ["id", "email", "amount", "gone"]  # the table has a column the batch lacks
    got = publishable(frame, DATASET, version=7, run_id="run1", rules=rules, table_columns=table)
    # a stale flag is dropped first, so in the reference too (it moves to the end)
    stale = [c for c in already if c == rule_flag(1)]
    reference = _one_after_another(frame.drop(*stale), rules, table)
    assert got.columns == reference.columns
    assert got.schema == reference.schema
    assert _rows(got) == _rows(reference)
    collected = got.collect()
    broken = {r["id"]: r[FAILED_RULES] for r in collected}
    assert broken == {1: [], 2: ["r_mail", "r_amount"], 3: ["r_mail_nn"]}  # in rule order
    assert {r[RUN_COL] for r in collected} == {"run1"}
