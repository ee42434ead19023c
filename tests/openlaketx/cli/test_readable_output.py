"""`laketx status`, `runs`, `explain`, `run` and the demo's report stay readable when piped or
narrow: every id whole on one line, no cell over three lines; rich tables on a terminal that
fits them (no Spark)."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text
from typer.testing import CliRunner

from lakeguard.records.decisions.records import DecisionRecord, RuleResult, SchemaChange
from lakeguard.records.decisions.versions import DatasetStatus
from lakeguard.records.evidence import CheckKind, CheckRecord, CheckResult, Evidence
from lakeguard.records.runs.records import JobRunRecord
from lakeguard.records.schema.drift import ChangeKind, DriftDecision
from lakeguard.words.vocabulary import (
    AttemptStatus,
    EventStatus,
    JobStatus,
    Layer,
    Outcome,
    Severity,
)
from openlaketx import render
from openlaketx.cli import app
from openlaketx.cli.shared import out
from openlaketx.runner.context import StepResult
from openlaketx.runner.job import JobResult
from openlaketx.runner.replay import Comparison, ReplayReport
from openlaketx.tabular import MAX_LINES, Column, Tabular
from tests.support.project import write

AT = datetime(2026, 11, 26, 12, 0, 0)
LONG_DATASET = "silver_cell_towers_by_region_and_operator_quarterly"
RUN_IDS = ["4f1c2d9e8b7a46c3a1d0e5f6b7c8d9e0", "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5"]
ERROR = (
    "rule lat_range (FAIL) failed on 120 of 20,000 rows; a FAIL rule blocks the promotion and "
    "the batch is kept in quarantine.bronze_cell_towers with its run id for inspection"
)


def printed(renderable: Any, *, width: int = 80, terminal: bool = False) -> str:
    """What the CLI's console prints, into a file `width` columns wide."""
    buf = StringIO()
    console = Console(
        file=buf,
        width=width,
        force_terminal=terminal,
        soft_wrap=out.soft_wrap,
        color_system=None,
    )
    console.print(renderable)
    return buf.getvalue()


def assert_readable(text: str, ids: list[str]) -> None:
    """Every id whole on one line; a rich table row (first cell set) over MAX_LINES at most."""
    lines = text.splitlines()
    for one in ids:
        assert any(one in line for line in lines), f"{one} is not whole on a line:\n{text}"
    run = 0
    for line in lines:
        cells = line.split("│")
        if len(cells) < 3:
            run = 0
            continue
        run = run + 1 if not cells[1].strip() else 1
        assert run <= MAX_LINES, f"a cell spans more than {MAX_LINES} lines:\n{text}"


def is_rich(text: str) -> bool:
    return "┃" in text or "│" in text


STATUS = [
    DatasetStatus(
        dataset_id=LONG_DATASET,
        layer=Layer.SILVER,
        table_name=f"silver.{LONG_DATASET}",
        version=3,
        snapshot_ref="12",
        row_count=19_500,
        promoted_at=AT,
        last_status=AttemptStatus.BLOCKED,
        last_run_at=AT,
        last_error=ERROR,
        trust=72,
    ),
    DatasetStatus(
        dataset_id="bronze_cell_towers",
        layer=Layer.BRONZE,
        table_name="bronze.cell_towers",
        version=2,
        snapshot_ref="4",
        row_count=20_000,
        promoted_at=AT,
        last_status=AttemptStatus.SUCCESS,
        last_run_at=AT,
        trust=96,
    ),
]
RUNS = [
    JobRunRecord(
        pipeline_logging_id=run_id,
        pipeline_id="cell_towers_daily_with_every_region",
        status=EventStatus.FAILED if n else EventStatus.COMPLETED,
        trigger_type="manual",
        start_time=AT,
        end_time=AT,
        duration_ms=61_250,
        error_message=ERROR if n else None,
        triggered_by="cli",
    )
    for n, run_id in enumerate(RUN_IDS)
]


def decision() -> DecisionRecord:
    return DecisionRecord(
        decision_id="d" * 32,
        dataset_id=LONG_DATASET,
        run_id=RUN_IDS[1],
        from_layer=Layer.BRONZE,
        to_layer=Layer.SILVER,
        allowed=False,
        reason=ERROR,
        evaluated_at=AT,
        evidence=Evidence(
            checks=(
                CheckRecord(
                    name="schema:nullability_loosened:cell_count_of_every_region",
                    kind=CheckKind.SCHEMA,
                    result=CheckResult.ALERT,
                    detail="nullability_loosened cell_count_of_every_region (additive: ALLOW) "
                    "and a detail long enough to need more than one line at any width",
                ),
            ),
            upstream={"bronze_cell_towers": 2},
        ),
        rules=(
            RuleResult(
                rule_id="lat_range_of_every_cell_tower_in_range",
                rule_type="RANGE",
                severity=Severity.FAIL,
                failed_rows=120,
                rows_evaluated=20_000,
                outcome=Outcome.FAIL,
                sample_values=("91.5", "-95.25", "100.0"),
            ),
        ),
        schema_changes=(
            SchemaChange(
                change_kind=ChangeKind.NULLABILITY_LOOSENED,
                column_name="cell_count",
                old_type="bigint",
                new_type="bigint",
                profile="additive",
                decision=DriftDecision.ALLOW,
            ),
        ),
        advice=("fix the rows failing lat_range_of_every_cell_tower_in_range and run again",),
        asks={"lat_range_of_every_cell_tower_in_range": "lat between -90 and 90"},
    )


def demo_summary() -> dict[str, Any]:
    step = {"status": "SUCCESS", "rows_read": 20_000, "rows_written": 19_500, "data_version": 1}
    return {
        "home": "/tmp/lakehouse",
        "runs": [
            {
                "delivery": "day 1",
                "file_rows": 20_000,
                "status": "COMPLETED",
                "steps": [
                    {"dataset": "bronze_cell_towers", **step},
                    {"dataset": "silver_cell_towers", **step},
                ],
                "skipped": [],
            }
        ],
        "layers": [
            {"dataset": d.dataset_id, "layer": d.layer, "table": d.table_name, "rows": d.row_count}
            for d in STATUS
        ],
        "rules": [
            {
                "delivery": "day 1",
                "dataset": "bronze_cell_towers",
                "rule": "lat_range_of_every_cell_tower_in_range",
                "severity": "FAIL",
                "failed_rows": 120,
                "rows": 20_000,
                "outcome": "FAIL",
            }
        ],
        "decisions": [
            {"delivery": "day 1", "dataset": LONG_DATASET, "allowed": False, "reason": ERROR}
        ],
        "versions": [
            {
                "dataset_id": LONG_DATASET,
                "version": 1,
                "snapshot_ref": "3",
                "row_count": 19_500,
                "promoted_at": AT,
            }
        ],
    }


def test_status_and_runs_piped_are_plain_columns_with_whole_ids() -> None:
    status = printed(render.rows_table([asdict(s) for s in STATUS], title="datasets"))
    assert not is_rich(status)
    assert_readable(status, [LONG_DATASET, f"silver.{LONG_DATASET}", "2026-11-26 12:00:00"])
    assert f"  last_error: {ERROR}" in status.splitlines()  # long text under its row, whole
    runs = printed(render.rows_table([asdict(r) for r in RUNS], title="runs"))
    assert not is_rich(runs)
    assert_readable(runs, [*RUN_IDS, "cell_towers_daily_with_every_region"])
    first, second = (next(li for li in runs.splitlines() if i in li) for i in RUN_IDS)
    assert first.index("COMPLETED") == second.index("FAILED")  # aligned columns


def test_runs_and_status_lines_are_their_records_with_the_word_before_the_status() -> None:
    for lines, records, word, stored in (
        (render.run_lines(RUNS), RUNS, "outcome", "status"),
        (render.status_lines(STATUS), STATUS, "last_outcome", "last_status"),
    ):
        for line, record in zip(lines, records, strict=True):
            kept = list(asdict(record))
            kept.insert(kept.index(stored), word)
            assert list(line) == kept  # the JSON's keys, in the record's order
            assert {k: v for k, v in line.items() if k != word} == asdict(record)
        table = printed(render.rows_table(lines, hide=(stored,)), width=400)
        assert word in table.splitlines()[0].split() and stored not in table.splitlines()[0]


def test_a_terminal_that_fits_gets_rich_tables_and_a_narrow_one_plain_columns() -> None:
    rows = [asdict(s) for s in STATUS]
    wide = printed(render.rows_table(rows, title="datasets"), width=300, terminal=True)
    assert is_rich(wide)
    assert_readable(wide, [LONG_DATASET, f"silver.{LONG_DATASET}"])
    assert max(len(line) for line in wide.splitlines()) <= 300
    narrow = printed(render.rows_table(rows, title="datasets"), width=80, terminal=True)
    assert not is_rich(narrow)
    assert_readable(narrow, [LONG_DATASET])


def test_free_text_wraps_over_three_lines_at_most_on_a_terminal() -> None:
    words = " ".join(f"word{n}" for n in range(30))
    table = Tabular([Column("id"), Column("note", text=True)], [[RUN_IDS[0], words]], title="notes")
    wrapped = printed(table, width=120, terminal=True)
    assert is_rich(wrapped) and 1 < sum("word" in line for line in wrapped.splitlines()) <= 3
    assert_readable(wrapped, [RUN_IDS[0]])
    plain = printed(table, width=60, terminal=True)  # would need more than three lines
    assert not is_rich(plain) and f"  note: {words}" in plain.splitlines()


def test_explain_piped_and_on_a_terminal() -> None:
    ids = [LONG_DATASET, RUN_IDS[1], "lat_range_of_every_cell_tower_in_range"]
    piped = printed(render.explain_panel(decision()))
    assert not is_rich(piped) and "╭" not in piped
    assert_readable(piped, [*ids, "schema:nullability_loosened:cell_count_of_every_region"])
    for heading in ("promotion decision", "rules", "checks and policies", "to get it allowed"):
        assert heading in piped
    assert ERROR in piped  # the reason whole, on one line
    boxed = printed(render.explain_panel(decision()), width=250, terminal=True)
    assert "╭" in boxed and "promotion decision" in boxed and is_rich(boxed)
    assert_readable(boxed, ids)


def test_run_result_replay_and_demo_report_piped() -> None:
    steps = [
        StepResult(
            dataset_id=LONG_DATASET,
            run_id=RUN_IDS[1],
            status=AttemptStatus.BLOCKED,
            rows_read=20_000,
            reason=ERROR,
        )
    ]
    result = JobResult(
        run_id=RUN_IDS[0], pipeline_id="cell_towers_daily", status=JobStatus.BLOCKED, steps=steps
    )
    shown = printed(render.job_result_table(result))
    assert not is_rich(shown)
    assert_readable(shown, [RUN_IDS[0], LONG_DATASET])
    digest = "9f" * 32
    replayed = ReplayReport(
        dataset_id=LONG_DATASET,
        version=3,
        recorded=digest,
        comparisons=[Comparison("rebuilt", digest, True, ERROR)],
    )
    shown = printed(render.replay_table(replayed))
    assert not is_rich(shown)
    assert_readable(shown, [LONG_DATASET, f"rebuilt     match   {digest}"])
    buf = StringIO()  # the demo's report is never cut, whatever the console's soft wrap
    render.print_demo(Console(file=buf, width=80, force_terminal=False), demo_summary())
    report = buf.getvalue()
    assert not is_rich(report)
    assert_readable(report, [LONG_DATASET, "lat_range_of_every_cell_tower_in_range"])
    assert f"  reason: {render.short_reason(ERROR)}" in report.splitlines()
    assert 'sql "SELECT * FROM lakeguard.run_history"' in report


def test_a_markup_like_value_is_shown_as_written() -> None:
    shown = printed(render.rows_table([{"id": "a[bold]b", "status": "[red]x"}]))
    assert "a[bold]b" in shown and "[red]x" in shown
    assert isinstance(render.status_text("FAILED"), Text)


def test_laketx_status_piped_through_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    dataset = "bronze_cell_towers_of_every_region_and_operator"
    doc = write(
        tmp_path / "doc.yaml",
        f"""
        source_systems:
          - {{id: feed, options: {{root: feed}}}}
        source_objects:
          - id: towers_csv
            system: feed
            locator: "towers/*.csv"
            dataset: {dataset}
            columns: [{{name: radio}}, {{name: cell, type: bigint}}]
        datasets:
          - {{id: {dataset}, layer: bronze, table: bronze.{dataset}}}
        """,
    )
    home = ["--home", str(tmp_path / "lakehouse")]
    runner = CliRunner()
    assert runner.invoke(app, [*home, "apply", str(doc)]).exit_code == 0
    shown = runner.invoke(app, [*home, "status"])
    assert shown.exit_code == 0, shown.output
    assert not is_rich(shown.stdout)
    assert_readable(shown.stdout, [dataset, f"bronze.{dataset}"])
    as_json = runner.invoke(app, [*home, "status", "--json"])
    (row,) = json.loads(as_json.stdout)
    assert row["dataset_id"] == dataset and row["table_name"] == f"bronze.{dataset}"


def test_an_error_keeps_its_brackets(tmp_path: Path) -> None:
    """An error's first line is text, not rich markup: `[prod]` is not swallowed."""
    missing = tmp_path / "section [prod]" / "defs[1].yaml"
    shown = CliRunner().invoke(app, ["validate", str(missing)])
    assert shown.exit_code == 3
    assert "section [prod]/defs[1].yaml does not exist" in shown.output
