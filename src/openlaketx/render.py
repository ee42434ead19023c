"""Human (rich) and machine (plain dict) renderings of facade results for the CLI."""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table

from lakeguard.catalog.plan import Plan
from lakeguard.store.ddl import sql_string
from openlaketx.runner.job import JobResult

if TYPE_CHECKING:
    from openlaketx.demo.scenario import DemoRun
    from openlaketx.lakehouse import Lakehouse

STATUS_STYLE = {
    "SUCCESS": "green",
    "COMPLETED": "green",
    "PASS": "green",
    "BLOCKED": "yellow",
    "WARN": "yellow",
    "WARNING": "yellow",
    "FAILED": "red",
    "FAIL": "red",
    "SKIPPED": "dim",
}


def styled(value: Any) -> str:
    text = "" if value is None else str(value)
    style = STATUS_STYLE.get(text)
    return f"[{style}]{text}[/]" if style else text


def _cell(value: Any) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def rows_table(rows: list[dict[str, Any]], title: str = "") -> Table | str:
    if not rows:
        return "(no rows)"
    table = Table(title=title or None, show_lines=False)
    for name in rows[0]:
        table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(
            *[
                styled(_cell(v)) if k.endswith("status") else _cell(v).replace("[", r"\[")
                for k, v in row.items()
            ]
        )
    return table


def plan_table(plan: Plan, *, applied: bool) -> Table:
    table = Table(title="applied" if applied else "plan (nothing written)")
    for col in ("table", "create", "update", "unchanged"):
        table.add_column(col, justify="right" if col != "table" else "left")
    for name, counts in plan.summary().items():
        table.add_row(name, str(counts["create"]), str(counts["update"]), str(counts["unchanged"]))
    return table


def run_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = (
        "pipeline_logging_id",
        "pipeline_id",
        "status",
        "trigger_type",
        "start_time",
        "duration_ms",
        "error_message",
    )
    return [{k: r.get(k) for k in keys} for r in rows]


def job_result_dict(result: JobResult) -> dict[str, Any]:
    return {
        "run_id": result.run_id,
        "pipeline_id": result.pipeline_id,
        "status": result.status,
        "duration_ms": result.duration_ms,
        "error": result.error,
        "skipped": result.skipped,
        "steps": [
            {
                "dataset_id": s.dataset_id,
                "run_id": s.run_id,
                "status": s.status,
                "rows_read": s.rows_read,
                "rows_written": s.rows_written,
                "data_version": s.data_version,
                "reason": s.reason,
                "rules": [
                    {
                        "rule_id": o.rule_id,
                        "outcome": o.outcome,
                        "failed_rows": o.failed_rows,
                        "severity": o.severity,
                    }
                    for o in s.outcomes
                ],
            }
            for s in result.steps
        ],
    }


def job_result_table(result: JobResult) -> Group:
    table = Table(title=f"run {result.run_id} of {result.pipeline_id}: {styled(result.status)}")
    for col in ("dataset", "status", "rows read", "rows written", "version", "reason"):
        table.add_column(col, overflow="fold")
    for s in result.steps:
        table.add_row(
            s.dataset_id,
            styled(s.status),
            _cell(s.rows_read),
            _cell(s.rows_written),
            _cell(s.data_version),
            (s.reason or "").replace("[", r"\["),
        )
    for skipped in result.skipped:
        table.add_row(skipped, styled("SKIPPED"), "", "", "", "an upstream task did not succeed")
    return Group(table)


def explain_panel(decision: dict[str, Any]) -> Panel:
    verdict = "[green]ALLOWED[/]" if decision["allowed"] else "[yellow]BLOCKED[/]"
    rules = Table(show_header=True)
    for col in ("rule", "type", "severity", "failed rows", "of", "outcome", "samples"):
        rules.add_column(col, overflow="fold")
    for r in decision["rules"]:
        rules.add_row(
            r["rule_id"],
            r["rule_type"],
            r["severity"],
            f"{r['failed_rows']:,}",
            f"{r['rows_evaluated']:,}",
            styled(r["outcome"]),
            _cell(r["sample_values"]).replace("[", r"\["),
        )
    head = (
        f"{decision['dataset_id']}: {decision['from_layer']} → {decision['to_layer']} "
        f"{verdict} at {_cell(decision['evaluated_at'])} (run {decision['run_id']})\n"
        f"{decision['reason']}"
    )
    return Panel(Group(head.replace("[run", r"\[run"), rules), title="promotion decision")


def demo_summary(lh: Lakehouse, runs: list[DemoRun]) -> dict[str, Any]:
    """What the demo did, read back from the metadata tables (not from memory)."""
    run_ids = [s.run_id for r in runs for s in r.result.steps] or ["-"]
    in_runs = "(" + ", ".join(sql_string(i) for i in run_ids) + ")"
    ns = lh.store.namespace
    layers = []
    for row in lh.status():
        count = row["row_count"]
        layers.append(
            {
                "dataset": row["dataset_id"],
                "layer": row["layer"],
                "table": row["table_name"],
                "approved_version": row["version"],
                "rows": count,
            }
        )
    quarantined = (
        lh.sql(
            "SELECT count(*) AS n FROM quarantine.bronze_cell_towers "
            f"WHERE _laketx_run_id IN {in_runs}"
        ).collect()[0]["n"]
        if lh.spark.catalog.tableExists("quarantine.bronze_cell_towers")
        else 0
    )
    layers.append(
        {
            "dataset": "bronze_cell_towers (quarantine)",
            "layer": "quarantine",
            "table": "quarantine.bronze_cell_towers",
            "approved_version": None,
            "rows": quarantined,
        }
    )
    decisions = lh.sql(
        f"SELECT dataset_id, run_id, allowed, reason FROM {ns}.promotion_status "
        f"WHERE run_id IN {in_runs} ORDER BY evaluated_at"
    ).collect()
    versions = lh.sql(
        f"SELECT dataset_id, version, snapshot_ref, row_count, rows_written, promoted_at "
        f"FROM {ns}.data_versions WHERE tenant_id = {sql_string(lh.store.tenant)} "
        f"ORDER BY promoted_at"
    ).collect()
    step_label = {s.run_id: r.label for r in runs for s in r.result.steps}
    return {
        "home": str(lh.config.home),
        "runs": [
            {
                "delivery": r.label,
                "file_rows": r.delivery.rows,
                "status": r.result.status,
                "steps": [
                    {
                        "dataset": s.dataset_id,
                        "status": s.status,
                        "rows_read": s.rows_read,
                        "rows_written": s.rows_written,
                        "data_version": s.data_version,
                    }
                    for s in r.result.steps
                ],
                "skipped": r.result.skipped,
            }
            for r in runs
        ],
        "layers": layers,
        "rules": [
            {
                "delivery": step_label.get(rid, ""),
                "dataset": o["dataset_id"],
                "rule": o["rule_id"],
                "severity": o["severity"],
                "failed_rows": o["failed_rows"],
                "rows": o["rows_evaluated"],
                "outcome": o["outcome"],
            }
            for rid, o in _outcomes_with_run(lh, in_runs)
        ],
        "decisions": [
            {
                "delivery": step_label.get(d["run_id"], ""),
                "dataset": d["dataset_id"],
                "allowed": d["allowed"],
                "reason": d["reason"],
            }
            for d in decisions
        ],
        "versions": [v.asDict() for v in versions],
    }


def _outcomes_with_run(lh: Lakehouse, in_runs: str) -> list[tuple[str, Any]]:
    rows = lh.sql(
        f"SELECT run_id, dataset_id, rule_id, severity, failed_rows, rows_evaluated, outcome "
        f"FROM {lh.store.namespace}.data_quality_results WHERE run_id IN {in_runs} "
        f"ORDER BY executed_at, rule_id"
    ).collect()
    return [(r["run_id"], r) for r in rows]


def short_reason(reason: str) -> str:
    """A decision's reason without the list of logged warnings (those are in the rule table)."""
    head, _, logged = reason.partition("; logged: ")
    if not logged:
        return head
    warned = logged.count("WARN ") + logged.count("ALERT ")
    return f"{head}; {warned} warning(s) logged"


def print_demo(console: Console, summary: dict[str, Any]) -> None:
    runs = Table(title="runs")
    for col in ("delivery", "file rows", "job", "bronze", "silver"):
        runs.add_column(col)
    for r in summary["runs"]:
        steps = {s["dataset"]: s for s in r["steps"]}

        def step_text(
            ds: str, steps: dict[str, Any] = steps, skipped: list[str] = r["skipped"]
        ) -> str:
            if ds in skipped:
                return styled("SKIPPED")
            s = steps.get(ds)
            if s is None:
                return ""
            text = (
                f"{styled(s['status'])} read {_cell(s['rows_read'])}, "
                f"wrote {_cell(s['rows_written'])}"
            )
            return text + (f", v{s['data_version']}" if s["data_version"] else "")

        runs.add_row(
            r["delivery"],
            f"{r['file_rows']:,}",
            styled(r["status"]),
            step_text("bronze_cell_towers"),
            step_text("silver_cell_towers"),
        )
    console.print(runs)
    console.print(rows_table(summary["layers"], title="rows per layer (approved snapshots)"))
    rules = Table(title="rule outcomes")
    for col in ("delivery", "rule", "severity", "failed rows", "outcome"):
        rules.add_column(col)
    for o in summary["rules"]:
        if o["outcome"] != "PASS":
            rules.add_row(
                o["delivery"],
                o["rule"],
                o["severity"],
                f"{o['failed_rows']:,} / {o['rows']:,}",
                styled(o["outcome"]),
            )
    console.print(rules)
    decisions = Table(title="gate decisions")
    for col in ("delivery", "dataset", "allowed", "reason"):
        decisions.add_column(col, overflow="fold")
    for d in summary["decisions"]:
        decisions.add_row(
            d["delivery"],
            d["dataset"],
            "[green]yes[/]" if d["allowed"] else "[yellow]no[/]",
            short_reason(d["reason"]),
        )
    console.print(decisions)
    console.print(rows_table(summary["versions"], title="approved versions"))
    console.print(
        f"\nEverything above is queryable, e.g. [bold]laketx --home {summary['home']} sql "
        '"SELECT * FROM lakeguard.run_history"[/] or [bold]laketx explain silver_cell_towers[/]'
    )
