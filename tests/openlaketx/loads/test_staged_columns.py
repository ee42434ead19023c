"""The columns the engine adds to a staged batch are SQL built without Spark, and they give the
values batches were always staged with.

The row digest, each rule's flag and the list of broken rules are each one SQL expression
(one round trip to the JVM). A row digest is stored with every published row and compared by
`verify` and `replay` with one recomputed from the data, so the digests of fixed rows are
pinned here: a change in how they are computed would make every stored version fail its check.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.evaluate import failed_rules_sql, rule_flag_sql
from openlaketx.loads.content import row_digest, row_digest_sql

WIDE = [f"c{i:02d}" for i in range(70)]  # two null masks: 62 columns each
SCHEMA = "id BIGINT, name STRING, amount DOUBLE, day DATE, `we``ird col` INT, " + ", ".join(
    f"{c} INT" for c in WIDE
)
RULES = [
    CompiledRule(
        "not_null_name",
        "NOT_NULL",
        "ERROR",
        0.0,
        ("name",),
        "`name` IS NULL",
        "CAST(`id` AS STRING)",
    ),
    CompiledRule("amount_pos", "RANGE", "WARN", 0.0, ("amount",), "NOT (`amount` >= 3)", None),
    CompiledRule("uniq", "UNIQUE", "ERROR", 0.0, ("id",), None, None, unique_keys=("id",)),
    CompiledRule(
        "it's",
        "CUSTOM",
        "WARN",
        0.5,
        ("day",),
        "`day` IS NULL OR `we``ird col` > 2",
        "concat(`we``ird col`, 'x')",
    ),
]


def rows() -> list[tuple[Any, ...]]:
    made = []
    for r in range(6):
        head = [
            r,
            None if r % 2 else f"n{r}",
            None if r == 3 else r * 1.5,
            None if r == 4 else date(2026, 1, r + 1),
            None if r == 5 else r,
        ]
        made.append(tuple(head + [None if (i + r) % 3 == 0 else i * r for i in range(70)]))
    return made


def test_a_digest_masks_62_columns_a_term_and_counts_absent_columns_as_null() -> None:
    sql = row_digest_sql(["b", "a", "_laketx_run_id", *WIDE], absent=["zz"])
    masks = sql.removeprefix("xxhash64(").split("), ")
    assert len([m for m in masks if m.startswith("(CAST(0 AS BIGINT)")]) == 2
    assert "_laketx_run_id" not in sql  # bookkeeping is not content
    assert "CASE WHEN true THEN" in sql  # `zz`, absent from the batch, is null in the table
    assert "`zz`" not in sql.split("END)")[-1]  # and has no value term
    assert row_digest_sql([]) == "xxhash64(0)"


def test_flags_wrap_the_vetted_sql_and_rule_ids_stay_literals() -> None:
    flags = dict(rule_flag_sql(RULES))
    assert list(flags) == ["_laketx_rule_0", "_laketx_rule_1", "_laketx_rule_2"]  # row rules only
    assert flags["_laketx_rule_0"].startswith("CASE WHEN (`name` IS NULL) THEN")
    assert "substring((CAST(`id` AS STRING)), 1, 200)" in flags["_laketx_rule_0"]
    failed = failed_rules_sql(RULES)
    assert "'it\\'s'" in failed and "THEN 'it's'" not in failed
    assert failed_rules_sql(RULES[2:3]) == "CAST(array() AS ARRAY<STRING>)"


@pytest.mark.spark
def test_digests_flags_and_broken_rules_are_the_values_always_stored(spark: Any) -> None:
    from pyspark.sql import functions as F

    frame = spark.createDataFrame(rows(), SCHEMA)
    every = frame.select("id", row_digest(frame.columns).alias("d")).orderBy("id")
    assert [r.d for r in every.collect()] == [
        -3912807114867464326,
        -6633569116391827709,
        3289807542585935989,
        -4936822250608753407,
        -9176128392947444276,
        776866663183744747,
    ]
    some = frame.select("id", row_digest(["id", "name", "amount"], ["zz", "aa"]).alias("d"))
    assert [r.d for r in some.orderBy("id").collect()] == [
        -9026311555696237673,
        1408558403027159360,
        770038275140958302,
        -7977838022146927885,
        7212741572576450038,
        -6122218301367305015,
    ]
    flagged = frame.withColumns({n: F.expr(q) for n, q in rule_flag_sql(RULES)})
    flagged = flagged.withColumn("failed", F.expr(failed_rules_sql(RULES)))
    names = ["_laketx_rule_0", "_laketx_rule_1", "_laketx_rule_2", "failed"]
    assert [list(r) for r in flagged.select("id", *names).orderBy("id").collect()] == [
        [0, None, "", None, ["amount_pos"]],
        [1, "+1", "", None, ["not_null_name", "amount_pos"]],
        [2, None, None, None, []],
        [3, "+3", None, "+3x", ["not_null_name", "it's"]],
        [4, None, None, "+4x", ["it's"]],
        [5, "+5", None, None, ["not_null_name"]],
    ]
    assert flagged.schema["failed"].dataType.simpleString() == "array<string>"


@pytest.mark.spark
def test_unique_counts_each_duplicated_row_of_exact_keys_only(spark: Any) -> None:
    """A composite key is counted by its exact columns, not by its hash: rows whose keys differ
    count apart even where a column repeats, null keys count for nothing, and a batch spanning
    parent versions counts per version."""
    from lakeguard.rules.quality.evaluate import evaluate_unique
    from lakeguard.rules.quality.kinds.base import as_text
    from lakeguard.words.vocabulary import PARENT_VERSION

    pair = CompiledRule(
        "pair_unique",
        "UNIQUE",
        "ERROR",
        0.0,
        ("region", "day"),
        None,
        as_text(["region", "day"]),
        unique_keys=("region", "day"),
    )
    data = [
        ("eu", 1, 1),
        ("eu", 1, 1),
        ("eu", 1, 1),  # three rows of one key
        ("eu", 2, 1),
        ("us", 1, 1),  # same columns, other pairs
        ("us", 2, 1),
        ("us", 2, 2),  # the same pair in another parent version
        (None, 3, 1),
        (None, 3, 1),  # a null key part: never a duplicate
    ]
    frame = spark.createDataFrame(data, f"region STRING, day INT, {PARENT_VERSION} BIGINT")
    outcome = evaluate_unique(frame, pair, len(data))
    assert outcome.failed_rows == 3
    assert set(outcome.samples) == {"eu|1"}
    merged = evaluate_unique(frame.drop(PARENT_VERSION), pair, len(data))
    assert merged.failed_rows == 5
    assert set(merged.samples) == {"eu|1", "us|2"}
