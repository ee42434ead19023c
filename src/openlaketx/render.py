"""Human (rich) and machine (plain dict) renderings of facade results for the CLI (pure).

Tables and the explain report are `openlaketx.tabular` renderables: rich on a terminal wide
enough for them, plain aligned columns with every id whole anywhere else (a pipe, a log).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, TypedDict

from rich.console import Console, Group
from rich.text import Text

from lakeguard.records.decisions.records import DecisionRecord
from lakeguard.records.decisions.versions import DatasetStatus
from lakeguard.records.runs.records import JobRunRecord
from lakeguard.rules.catalog.plan import Plan
from lakeguard.words.vocabulary import (
    AttemptStatus,
    JobStatus,
    Outcome,
    Severity,
)
from openlaketx.outcomes import LOOKS, RunOutcome, attempt_outcome, word_of
from openlaketx.runner.job import JobResult
from openlaketx.runner.replay import ReplayReport
from openlaketx.tabular import Column, Report, Tabular

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    # what `rows_table` and `print_json` take: records (a dataclass's fields are its columns), or
    # rows whose columns are someone else's (a SQL query's, a dataset's)
    Rows = Sequence[DataclassInstance] | Sequence[Mapping[str, object]]

STATUS_STYLE = {
    **{str(word): look.colour for word, look in LOOKS.items()},
    "ALLOW": "green",
    "ALERT": "yellow",
    "BLOCK": "red",
    "SUCCESS": "green",
    "COMPLETED": "green",
    "PASS": "green",
    "BLOCKED": "yellow",
    "WARN": "yellow",
    "WARNING": "yellow",
    "FAIL": "red",
}


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


def status_text(value: Any) -> Text:
    """A status word in its colour (plain text: never read as markup)."""
    text = "" if value is None else str(value)
    return Text(text, style=STATUS_STYLE.get(text, ""))


def _numeric(values: list[Any]) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in present
    )


def rows_table(records: Rows, title: str = "", hide: Collection[str] = ()) -> Tabular | str:
    """Rows of any shape, or records (a dataclass's fields are its columns), without the
    columns in `hide`: a column with spaces in a value is free text (it may wrap on a terminal,
    and goes under its row in plain columns when long); numbers align right."""
    if not records:
        return "(no rows)"
    rows = [r if isinstance(r, Mapping) else asdict(r) for r in records]
    names = [name for name in rows[0] if name not in hide]
    cells = [[_cell(row.get(k)) for k in names] for row in rows]
    columns = [
        Column(
            name,
            text=any(any(ch.isspace() for ch in r[i]) for r in cells),
            justify="right" if _numeric([row.get(name) for row in rows]) else "left",
        )
        for i, name in enumerate(names)
    ]
    return Tabular(
        columns,
        (
            [
                status_text(v) if k.endswith(("status", "outcome")) else Text(v)
                for k, v in zip(names, r, strict=True)
            ]
            for r in cells
        ),
        title=title,
    )


def plan_table(plan: Plan, *, applied: bool) -> Tabular:
    counted = ("create", "update", "deactivate", "unchanged")
    return Tabular(
        [Column("table"), *(Column(a, justify="right") for a in counted)],
        ([name, *(str(counts[a]) for a in counted)] for name, counts in plan.summary().items()),
        title="applied" if applied else "plan (nothing written)",
    )


class RuleJson(TypedDict):
    rule_id: str
    outcome: Outcome
    failed_rows: int
    severity: str


class StepJson(TypedDict):
    dataset_id: str
    run_id: str
    status: AttemptStatus
    rows_read: int | None
    rows_written: int | None
    data_version: int | None
    reason: str | None
    quarantined: int
    rules: list[RuleJson]


class JobResultJson(TypedDict):
    """`laketx run --json`: the run, each dataset attempt with its rules, the tasks skipped."""

    run_id: str
    pipeline_id: str
    status: JobStatus
    duration_ms: int
    error: str | None
    skipped: list[str]
    steps: list[StepJson]


def job_result_dict(result: JobResult) -> JobResultJson:
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


def _worded(record: DataclassInstance, stored: str, shown: str) -> dict[str, object]:
    """A record's fields as a line, with the word shown for its stored status (`shown`) just
    before it: the JSON keeps both (BLOCKED for a HELD run), the table hides the stored one."""
    items = list(asdict(record).items())
    at = [name for name, _ in items].index(stored)
    items.insert(at, (shown, word_of(items[at][1])))
    return dict(items)


def run_lines(runs: Sequence[JobRunRecord]) -> list[dict[str, object]]:
    """`laketx runs`: each run with its `outcome`, the dashboard's and the API's word."""
    return [_worded(r, "status", "outcome") for r in runs]


def status_lines(statuses: Sequence[DatasetStatus]) -> list[dict[str, object]]:
    """`laketx status`: each dataset with its `last_outcome`, the overview's word."""
    return [_worded(s, "last_status", "last_outcome") for s in statuses]


def job_result_table(result: JobResult) -> Group:
    title = Text(f"run {result.run_id} of {result.pipeline_id}: ") + status_text(
        word_of(result.status)
    )
    columns = [
        Column("dataset"),
        Column("status"),
        Column("rows read", justify="right"),
        Column("rows written", justify="right"),
        Column("version", justify="right"),
        Column("reason", text=True),
    ]
    rows: list[list[Text | str]] = [
        [
            s.dataset_id,
            status_text(attempt_outcome(s.status, s.data_version, s.rows_written)),
            _cell(s.rows_read),
            _cell(s.rows_written),
            _cell(s.data_version),
            s.reason or "",
        ]
        for s in result.steps
    ]
    rows += [
        [skipped, status_text(RunOutcome.SKIPPED), "", "", "", "an upstream task did not succeed"]
        for skipped in result.skipped
    ]
    table = Tabular(columns, rows, title=title)
    if result.refused is not None:  # nothing ran: say why instead of an empty table
        return Group(table, Text(f"not started: {result.error}"))
    return Group(table)


def replay_table(report: ReplayReport) -> Group:
    verdict = Text("MATCH", "green") if report.matches else Text("MISMATCH", "red")
    title = Text(f"replay of {report.dataset_id} version {report.version}: ") + verdict
    title += f" (recorded {report.recorded or 'nothing'})"
    result = {True: Text("match", "green"), False: Text("differs", "red"), None: Text("-", "dim")}
    table = Tabular(
        [Column("comparison"), Column("result"), Column("content hash"), Column("what", text=True)],
        ([c.name, result[c.matches], c.content_hash or "", c.detail] for c in report.comparisons),
        title=title,
    )
    return Group(table, *[Text(f"note: {n}") for n in report.notes])


def explain_panel(decision: DecisionRecord) -> Report:
    verdict = status_text(RunOutcome.PROMOTED if decision.allowed else RunOutcome.HELD)
    head = Text(f"{decision.dataset_id}: {decision.from_layer} → {decision.to_layer} ")
    head += verdict
    head += f" at {_cell(decision.evaluated_at)} (run {decision.run_id})"
    if decision.version is not None:
        head += f", version {decision.version}"
    parts: list[Text | Tabular] = [head + "\n" + decision.reason]
    if decision.trust:
        parts.append(Text(f"trust of {decision.dataset_id}: {decision.trust.explain()}"))
    upstream = decision.evidence.upstream
    if upstream:
        parts.append(
            Text("upstream: " + ", ".join(f"{k} v{v}" for k, v in sorted(upstream.items())))
        )
    rules = [
        Column("rule"),
        Column("type"),
        Column("asks", text=True),
        Column("severity"),
        Column("failed rows", justify="right"),
        Column("of", justify="right"),
        Column("outcome"),
        Column("samples", text=True),
    ]
    parts.append(
        Tabular(
            rules,
            (
                [
                    r.rule_id,
                    r.rule_type,
                    decision.asks.get(r.rule_id, ""),
                    r.severity,
                    f"{r.failed_rows:,}",
                    f"{r.rows_evaluated:,}",
                    status_text(r.outcome),
                    _cell(r.sample_values),
                ]
                for r in decision.rules
            ),
            title="rules",
        )
    )
    checks = decision.evidence.checks
    if checks:
        columns = [Column("check"), Column("kind"), Column("result"), Column("detail", text=True)]
        parts.append(
            Tabular(
                columns,
                ([c.name, str(c.kind), status_text(c.result), c.detail] for c in checks),
                title="checks and policies",
            )
        )
    if decision.schema_changes:
        changes = rows_table([asdict(c) for c in decision.schema_changes], title="schema changes")
        parts.append(changes if isinstance(changes, Tabular) else Text(changes))
    if decision.stuck:
        parts.append(Text(decision.stuck))
    if decision.advice:
        parts.append(Text("to get it allowed:\n" + "\n".join(f"  - {a}" for a in decision.advice)))
    return Report("promotion decision", parts)


def short_reason(reason: str) -> str:
    """A decision's reason without the list of logged warnings (those are in the rule table)."""
    head, _, logged = reason.partition("; logged: ")
    if not logged:
        return head
    warned = logged.count("WARN ") + logged.count("ALERT ")
    return f"{head}; {warned} warning(s) logged"


class DemoStep(TypedDict):
    dataset: str
    status: AttemptStatus
    rows_read: int | None
    rows_written: int | None
    data_version: int | None


class DemoRunJson(TypedDict):
    delivery: str  # which delivery the run took in
    file_rows: int
    status: JobStatus
    steps: list[DemoStep]
    skipped: list[str]


class DemoLayer(TypedDict):
    dataset: str
    layer: str
    table: str
    approved_version: int | None
    rows: int | None


class DemoRule(TypedDict):
    delivery: str
    dataset: str
    rule: str
    severity: Severity
    failed_rows: int
    rows: int
    outcome: Outcome


class DemoDecision(TypedDict):
    delivery: str
    dataset: str
    allowed: bool
    reason: str


class DemoVersion(TypedDict):
    dataset_id: str
    version: int
    snapshot_ref: str
    row_count: int
    promoted_at: datetime | None


class DemoSummary(TypedDict):
    """What `laketx demo` did, read back from the metadata tables (its `--json`)."""

    home: str
    runs: list[DemoRunJson]
    layers: list[DemoLayer]
    rules: list[DemoRule]
    decisions: list[DemoDecision]
    versions: list[DemoVersion]


def _demo_run(run: DemoRunJson) -> list[Text | str]:
    steps = {s["dataset"]: s for s in run["steps"]}

    def step_text(dataset: str) -> Text:
        if dataset in run["skipped"]:
            return status_text("SKIPPED")
        s = steps.get(dataset)
        if s is None:
            return Text("")
        text = status_text(s["status"])
        text += f" read {_cell(s['rows_read'])}, wrote {_cell(s['rows_written'])}"
        return text + (f", v{s['data_version']}" if s["data_version"] else "")

    return [
        run["delivery"],
        f"{run['file_rows']:,}",
        status_text(run["status"]),
        step_text("bronze_cell_towers"),
        step_text("silver_cell_towers"),
    ]


def print_demo(console: Console, summary: DemoSummary) -> None:
    """The demo's report; its lines are never cut at the console's width (ids stay whole)."""

    def show(renderable: Any) -> None:
        console.print(renderable, soft_wrap=True)

    runs = [
        Column("delivery"),
        Column("file rows", justify="right"),
        Column("job"),
        Column("bronze", text=True),
        Column("silver", text=True),
    ]
    show(Tabular(runs, [_demo_run(r) for r in summary["runs"]], title="runs"))
    show(rows_table(summary["layers"], title="rows per layer (approved snapshots)"))
    rules = [
        Column("delivery"),
        Column("rule"),
        Column("severity"),
        Column("failed rows", justify="right"),
        Column("outcome"),
    ]
    show(
        Tabular(
            rules,
            (
                [
                    o["delivery"],
                    o["rule"],
                    o["severity"],
                    f"{o['failed_rows']:,} / {o['rows']:,}",
                    status_text(o["outcome"]),
                ]
                for o in summary["rules"]
                if o["outcome"] != "PASS"
            ),
            title="rule outcomes",
        )
    )
    decisions = [
        Column("delivery"),
        Column("dataset"),
        Column("allowed"),
        Column("reason", text=True),
    ]
    show(
        Tabular(
            decisions,
            (
                [
                    d["delivery"],
                    d["dataset"],
                    Text("yes", "green") if d["allowed"] else Text("no", "yellow"),
                    short_reason(d["reason"]),
                ]
                for d in summary["decisions"]
            ),
            title="gate decisions",
        )
    )
    show(rows_table(summary["versions"], title="approved versions"))
    show(
        Text("\nEverything above is queryable, e.g. ")
        + Text(f'laketx --home {summary["home"]} sql "SELECT * FROM lakeguard.run_history"', "bold")
        + " or "
        + Text("laketx explain silver_cell_towers", "bold")
    )
