"""Human (rich) and machine (plain dict) renderings of facade results for the CLI (pure)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table

from lakeguard.catalog.plan import Plan
from lakeguard.shapes import JsonObject, StoredRow
from lakeguard.store.records import DecisionRecord
from openlaketx.runner.job import JobResult
from openlaketx.runner.replay import ReplayReport

STATUS_STYLE = {
    "ALLOW": "green",
    "ALERT": "yellow",
    "BLOCK": "red",
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


def rows_table(rows: list[StoredRow], title: str = "") -> Table | str:
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
    for col in ("table", "create", "update", "deactivate", "unchanged"):
        table.add_column(col, justify="right" if col != "table" else "left")
    for name, counts in plan.summary().items():
        table.add_row(
            name,
            *(str(counts[a]) for a in ("create", "update", "deactivate", "unchanged")),
        )
    return table


def job_result_dict(result: JobResult) -> JsonObject:
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
                "quarantined": s.quarantined,
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
    if result.refused is not None:  # nothing ran: say why instead of an empty table
        return Group(table, _plain(f"not started: {result.error}"))
    return Group(table)


def replay_table(report: ReplayReport) -> Group:
    verdict = "[green]MATCH[/]" if report.matches else "[red]MISMATCH[/]"
    table = Table(
        title=f"replay of {report.dataset_id} version {report.version}: {verdict} "
        f"(recorded {report.recorded or 'nothing'})"
    )
    for col in ("comparison", "result", "content hash", "what"):
        table.add_column(col, overflow="fold")
    for c in report.comparisons:
        result = {True: "[green]match[/]", False: "[red]differs[/]", None: "[dim]-[/]"}
        table.add_row(c.name, result[c.matches], c.content_hash or "", _plain(c.detail))
    return Group(table, *[_plain(f"note: {n}") for n in report.notes])


def explain_panel(decision: DecisionRecord) -> Panel:
    verdict = "[green]ALLOWED[/]" if decision.allowed else "[yellow]BLOCKED[/]"
    head = (
        f"{decision.dataset_id}: {decision.from_layer} → {decision.to_layer} "
        f"{verdict} at {_cell(decision.evaluated_at)} (run {decision.run_id})"
    )
    if decision.version is not None:
        head += f", version {decision.version}"
    parts: list[Any] = [head.replace("[run", r"\[run") + "\n" + _plain(decision.reason)]
    if decision.trust:
        parts.append(f"trust of {decision.dataset_id}: {decision.trust['explanation']}")
    upstream = decision.evidence.upstream
    if upstream:
        parts.append("upstream: " + ", ".join(f"{k} v{v}" for k, v in sorted(upstream.items())))
    rules = Table(title="rules", show_header=True)
    for col in ("rule", "type", "asks", "severity", "failed rows", "of", "outcome", "samples"):
        rules.add_column(col, overflow="fold")
    for r in decision.rules:
        rules.add_row(
            r.rule_id,
            r.rule_type,
            _plain(decision.asks.get(r.rule_id, "")),
            r.severity,
            f"{r.failed_rows:,}",
            f"{r.rows_evaluated:,}",
            styled(r.outcome),
            _plain(_cell(r.sample_values)),
        )
    parts.append(rules)
    checks = decision.evidence.checks
    if checks:
        table = Table(title="checks and policies", show_header=True)
        for col in ("check", "kind", "result", "detail"):
            table.add_column(col, overflow="fold")
        for c in checks:
            table.add_row(c.name, str(c.kind), styled(c.result), _plain(c.detail))
        parts.append(table)
    if decision.schema_changes:
        parts.append(rows_table(list(decision.schema_changes), title="schema changes"))
    if decision.stuck:
        parts.append(_plain(decision.stuck))
    if decision.advice:
        advice = "\n".join(f"  - {a}" for a in decision.advice)
        parts.append("to get it allowed:\n" + _plain(advice))
    return Panel(Group(*parts), title="promotion decision")


def _plain(text: str) -> str:
    """Text shown as written (rich would read `[...]` as markup)."""
    return text.replace("[", r"\[")


def short_reason(reason: str) -> str:
    """A decision's reason without the list of logged warnings (those are in the rule table)."""
    head, _, logged = reason.partition("; logged: ")
    if not logged:
        return head
    warned = logged.count("WARN ") + logged.count("ALERT ")
    return f"{head}; {warned} warning(s) logged"


def print_demo(console: Console, summary: JsonObject) -> None:
    runs = Table(title="runs")
    for col in ("delivery", "file rows", "job", "bronze", "silver"):
        runs.add_column(col)
    for r in summary["runs"]:
        steps = {s["dataset"]: s for s in r["steps"]}

        def step_text(ds: str, steps: JsonObject = steps, skipped: list[str] = r["skipped"]) -> str:
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
