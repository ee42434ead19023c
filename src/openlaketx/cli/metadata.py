"""`laketx export`, `laketx changes` and `laketx watch`: metadata as data, both ways (seed
004). None of them starts a JVM."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer

from lakeguard.actors.catalog.changes import parse_since
from lakeguard.reads.reader import StoreReader
from lakeguard.rules.catalog.loader import validate_text
from lakeguard.store import MetadataStore
from lakeguard.store.migrations import migrate as run_migrations
from lakeguard.store.migrations import pending
from lakeguard.words.errors import ExitCode, ValidationError
from openlaketx.cli.shared import (
    JsonFlag,
    app,
    config_of,
    err,
    guard,
    out,
    print_json,
    with_lakehouse,
)
from openlaketx.render import rows_table


@app.command()
def export(
    ctx: typer.Context,
    out_file: Path | None = typer.Option(
        None, "--out", help="Write the document here (default: standard output)."
    ),
) -> None:
    """Write the tenant's current definitions as one YAML document (direct SQL edits
    included). `validate` accepts it and `plan` on it finds nothing to change."""
    text = with_lakehouse(ctx, True, lambda lh, _: lh.export())
    if out_file is None:
        sys.stdout.write(text)
    else:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        out_file.write_text(text, encoding="utf-8")
    source = str(out_file or "<export>")

    def check() -> None:
        try:
            validate_text(text, source)
        except ValidationError as exc:
            raise ValidationError(
                f"the stored definitions do not form a valid document: {exc.message}",
                where=source,
                errors=exc.errors,
                fix="correct the rows a direct edit broke (see the errors), or correct the "
                "exported document and apply it",
            ) from None

    guard(ctx, False, check)
    if out_file is not None:
        err.print(f"exported to {out_file}", highlight=False)


@app.command()
def changes(
    ctx: typer.Context,
    since: str | None = typer.Option(
        None, help="A time (ISO 8601, UTC unless it says) or an age: 90m, 2h, 7d."
    ),
    since_version: int | None = typer.Option(
        None, help="A Delta version of the definition tables (each table's own versions)."
    ),
    as_json: JsonFlag = False,
) -> None:
    """New, updated, deactivated and reactivated jobs, datasets, sources, rules and policies,
    each with the fields that changed (old -> new), from the tables' Delta history."""

    def work(lh: Any, progress: Any) -> Any:
        when = None if since is None else parse_since(since, lh.store.now())
        progress("reading the definition tables' history")
        return lh.changes(since=when, since_version=since_version)

    report = with_lakehouse(ctx, as_json, work)
    if as_json:
        print_json(report.as_json())
        return
    if not report.changes:
        out.print("no definition changed")
        return
    rows = []
    for change in report.changes:
        fields = change.fields.items() or [("", (None, None))]
        for i, (name, (old, new)) in enumerate(fields):
            rows.append(
                {
                    "kind": change.kind if i == 0 else "",
                    "id": change.id if i == 0 else "",
                    "action": change.action if i == 0 else "",
                    "field": name,
                    "old": "" if old is None else str(old),
                    "new": "" if new is None else str(new),
                }
            )
    out.print(rows_table(rows, "definition changes"))


@app.command()
def watch(
    ctx: typer.Context,
    folder: Path = typer.Argument(..., help="The folder YAML documents are dropped in."),
    deactivate_missing: bool = typer.Option(
        False, help="A document removed from the folder deactivates what it defined."
    ),
    once: bool = typer.Option(False, help="One pass, then exit."),
    interval: float = typer.Option(5.0, min=0.2, help="Seconds between passes."),
    as_json: JsonFlag = False,
) -> None:
    """Keep a folder of YAML documents applied: each new or changed document is validated,
    planned and applied once (an invalid one is refused whole); every sync is recorded in
    metadata_syncs. No JVM."""
    lh = with_lakehouse(ctx, as_json, lambda lh, _: lh)
    watcher = guard(ctx, as_json, lambda: lh.watcher(folder, deactivate_missing=deactivate_missing))
    if not as_json and not once:
        err.print(f"watching {watcher.folder} (Ctrl-C stops)", highlight=False)
    try:
        while True:
            for result in guard(ctx, as_json, watcher.sync):
                _print_sync(result, as_json)
            if once:
                return
            time.sleep(interval)
    except KeyboardInterrupt:
        err.print("\nstopped")


def _print_sync(result: Any, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(asdict(result), default=str) + "\n")
        sys.stdout.flush()
        return
    counts: dict[str, int] = {}
    for change in result.changes:
        counts[change["action"]] = counts.get(change["action"], 0) + 1
    said = ", ".join(f"{n} {a}" for a, n in sorted(counts.items())) or "nothing to change"
    out.print(f"{result.outcome:<11} {result.file}: {said}", highlight=False, markup=False)
    for error in result.errors:
        out.print(f"  {error['path']}: {error['message']}", highlight=False, markup=False)


@app.command()
def migrate(
    ctx: typer.Context,
    plan_only: bool = typer.Option(False, "--plan", help="List the steps; change nothing."),
    as_json: JsonFlag = False,
) -> None:
    """Bring the metadata stores of the home (every tenant's) to this laketx's version, each
    numbered migration in order, keeping every row; then each quarantine to each held batch
    once, none promoted since. No JVM."""
    # start-up time: the service's modules load only for the commands that use them
    from openlaketx.runner.quarantine import settle_all
    from openlaketx.service.tenants import known_tenants

    base = config_of(ctx)

    def work() -> dict[str, list[str]]:
        report: dict[str, list[str]] = {}
        for tenant in known_tenants(base):
            cfg = base.for_tenant(tenant)
            store = MetadataStore(cfg.namespace, cfg.metadata_location, cfg.tenant)
            if plan_only:
                steps = pending(store)
                report[tenant] = [
                    f"{s.migration.version} {s.migration.name} ({s.migration.why}): "
                    f"{len(s.tables)} table(s)"
                    for s in steps
                ]
                if steps:  # the quarantines are read once the store opens
                    continue
            else:
                report[tenant] = run_migrations(store)
            # a quarantine written before each held batch was kept once
            # (lakeguard.records.quarantine)
            settled = settle_all(StoreReader(store), cfg.warehouse, apply=not plan_only)
            report[tenant] += [f"{t}: {line}" for t, lines in settled.items() for line in lines]
        return report

    report = guard(ctx, as_json, work)
    if as_json:
        print_json({"planned" if plan_only else "migrated": report})
        return
    for tenant, lines in report.items():
        out.print(f"[bold]{tenant}[/]: {'up to date' if not lines else ''}", highlight=False)
        for line in lines:
            out.print(f"  {line}", highlight=False, markup=False)


@app.command()
def check(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Re-validate the stored definitions (direct SQL edits included) as a run would: each
    problem with its table, key, fix and what it blocks; exit 3 when there is any. No JVM."""
    problems = with_lakehouse(ctx, as_json, lambda lh, _: lh.definition_problems())
    found = [
        {
            "where": p.where,
            "message": p.message,
            "fix": p.fix,
            "blocks": sorted(
                [f"dataset {d}" for d in p.datasets]
                + [f"job {j}" for j in p.jobs]
                + [f"schedule of {s}" for s in p.schedules]
            ),
        }
        for p in problems
    ]
    if as_json:
        print_json({"valid": not found, "problems": found})
    elif not found:
        out.print("[green]the stored definitions are valid[/]")
    else:
        for problem in found:
            blocks = ", ".join(problem["blocks"]) or "nothing (reported only)"
            err.print(f"{problem['where']}: {problem['message']}", highlight=False, markup=False)
            err.print(f"  blocks: {blocks}", highlight=False, markup=False)
            err.print(f"  fix: {problem['fix']}", highlight=False, markup=False)
    if found:
        raise typer.Exit(ExitCode.INVALID)
