"""Parquet footers → Delta add-action statistics, per-rule failures and samples, and the profile
(pyarrow-written files, no Spark)."""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.evaluate import RuleTally, row_outcomes
from openlaketx.loads.footers import STRING_PREFIX, delta_stats, profile, read_footer
from openlaketx.loads.publish import fields_of
from openlaketx.runner.rule_tallies import rule_tallies


def write(path: Path, table: pa.Table, row_group_size: int | None = None) -> str:
    pq.write_table(table, path, row_group_size=row_group_size)
    return str(path)


def test_statistics_are_safe_bounds_for_data_skipping(tmp_path: Path) -> None:
    long_text = "x" * (STRING_PREFIX + 5)
    table = pa.table(
        {
            "n": pa.array([3, None, 7], pa.int64()),
            "f": pa.array([1.5, math.nan, -2.0]),
            "s": pa.array(["b", "a", long_text]),
            "short": pa.array(["b", "a", None]),
            "d": pa.array([date(2024, 1, 2), date(2023, 5, 6), None]),
            "ts": pa.array(
                [datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=UTC), None, None],
                pa.timestamp("us", tz="UTC"),
            ),
            "flag": pa.array([True, False, None]),
        }
    )
    footer = read_footer(write(tmp_path / "a.parquet", table, row_group_size=2))
    stats = json.loads(delta_stats(footer, table.column_names))
    assert stats["numRecords"] == 3
    assert stats["minValues"]["n"] == 3 and stats["maxValues"]["n"] == 7
    assert stats["nullCount"] == {"n": 1, "f": 0, "s": 0, "short": 1, "d": 1, "ts": 2, "flag": 1}
    # a string longer than the prefix: its prefix is a valid lower bound, no upper bound is
    assert stats["minValues"]["s"] == "a" and "s" not in stats["maxValues"]
    assert stats["maxValues"]["short"] == "b"
    assert stats["minValues"]["d"] == "2023-05-06" and stats["maxValues"]["d"] == "2024-01-02"
    assert stats["maxValues"]["ts"] == "2024-01-01T12:00:00.123456Z"
    assert "flag" not in stats["minValues"]  # booleans: no bounds


def test_a_column_missing_from_the_file_gets_no_statistics(tmp_path: Path) -> None:
    footer = read_footer(write(tmp_path / "a.parquet", pa.table({"a": [1]})))
    stats = json.loads(delta_stats(footer, ["a", "b"]))
    assert "b" not in stats["nullCount"] and stats["maxValues"] == {"a": 1}


def _rule(rule_id: str) -> CompiledRule:
    return CompiledRule(rule_id, "REGEX", "WARN", 0.0, ("s",), "s IS NULL", "s")


def test_rule_failures_and_samples_come_from_the_footers(tmp_path: Path) -> None:
    rules = [_rule("r0"), _rule("r1")]
    # flags: null = the row passes; "+value" = it fails with that sample; "" = it fails with
    # no sample value
    a = pa.table(
        {"_laketx_rule_0": [None, "+b", "+a", None], "_laketx_rule_1": [None, None, None, ""]}
    )
    b = pa.table(
        {"_laketx_rule_0": ["+z", None], "_laketx_rule_1": pa.array([None, None], pa.string())}
    )
    files = [read_footer(write(tmp_path / "a.parquet", a, row_group_size=2))]
    files.append(read_footer(write(tmp_path / "b.parquet", b)))
    tallies = rule_tallies(files, rules)
    assert tallies[0] == RuleTally(3, "+a", "+z") and tallies[0].samples() == ["a", "z"]
    assert tallies[1].failed == 1 and tallies[1].samples() == [None, None]
    outcomes = row_outcomes(tallies, rules, 6)
    assert [(o.failed_rows, o.samples) for o in outcomes] == [(3, ("a", "z")), (1, ())]
    clean = read_footer(
        write(
            tmp_path / "c.parquet",
            pa.table(
                {
                    "_laketx_rule_0": pa.array([None], pa.string()),
                    "_laketx_rule_1": pa.array([None], pa.string()),
                }
            ),
        )
    )
    assert rule_tallies([clean], rules) == {}


def test_a_footer_without_statistics_has_its_column_read(tmp_path: Path) -> None:
    table = pa.table({"_laketx_rule_0": [None, "+q", "+c", None, "+q"]})
    path = tmp_path / "plain.parquet"
    pq.write_table(table, path, write_statistics=False)
    tallies = rule_tallies([read_footer(str(path))], [_rule("r0")])
    assert tallies[0] == RuleTally(3, "+c", "+q")


def test_staged_only_columns_never_reach_a_table_schema() -> None:
    names = ["k", "_laketx_rule_0", "_laketx_rule_12", "_laketx_parent_version"]
    names += ["_laketx_failed_rules", "_corrupt_record"]
    staged = {
        "fields": [{"name": n, "type": "string", "nullable": True, "metadata": {}} for n in names]
    }
    kept = [f["name"] for f in fields_of(staged, frozenset({"_corrupt_record"}))]
    assert kept == ["k", "_laketx_failed_rules"]


def test_profile_spans_files(tmp_path: Path) -> None:
    a = read_footer(write(tmp_path / "a.parquet", pa.table({"x": [1, None], "s": ["m", "n"]})))
    b = read_footer(write(tmp_path / "b.parquet", pa.table({"x": [5, 2], "s": ["a", None]})))
    metrics = {(c, m): v for c, m, v in profile([a, b], ["x", "s"])}
    assert metrics[("x", "min")] == "1" and metrics[("x", "max")] == "5"
    assert metrics[("x", "null_count")] == "1" and metrics[("s", "null_count")] == "1"
    assert metrics[("s", "min")] == "a" and metrics[("s", "max")] == "n"
    assert metrics[("*", "row_count")] == "4"
