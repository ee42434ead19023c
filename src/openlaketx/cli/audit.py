"""`laketx verify`, `replay`, `reap` and `optimize`: auditing and keeping the store (none of
them but replay starts a JVM)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import typer

from lakeguard.words.errors import ExitCode
from openlaketx import render
from openlaketx.cli.shared import JsonFlag, app, out, print_json, with_lakehouse


@app.command()
def verify(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Audit the store against every invariant (exit 0 only when all hold). No Spark."""
    violations = with_lakehouse(ctx, as_json, lambda lh, _: lh.verify())
    rows = [asdict(v) for v in violations]
    if as_json:
        print_json({"ok": not rows, "violations": rows})
    elif rows:
        out.print(render.rows_table(rows, title=f"{len(rows)} violation(s)"))
    else:
        out.print("[green]every invariant holds[/]")
    if rows:
        raise typer.Exit(ExitCode.AUDIT)


@app.command()
def replay(
    ctx: typer.Context,
    dataset: str,
    version: int = typer.Option(..., help="The approved data version to rebuild and compare."),
    as_json: JsonFlag = False,
) -> None:
    """Rebuild an approved version and compare content hashes (exit 10 on a mismatch)."""

    def work(lh: Any, progress: Callable[[str], None]) -> Any:
        progress("starting Spark")
        return lh.replay(dataset, version)

    report = with_lakehouse(ctx, as_json, work)
    if as_json:
        print_json({**asdict(report), "matches": report.matches})
    else:
        out.print(render.replay_table(report))
    if not report.matches:
        raise typer.Exit(ExitCode.AUDIT)


@app.command()
def reap(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Record runs whose process died in flight as FAILED. No Spark."""

    reaped = with_lakehouse(ctx, as_json, lambda lh, _: list(lh.reap()))
    if as_json:
        print_json({"reaped": reaped})
    else:
        out.print(f"{len(reaped)} abandoned run(s) recorded FAILED")


@app.command()
def optimize(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Compact the metadata tables and cluster them by their usual filters. No Spark."""

    def work(lh: Any, progress: Callable[[str], None]) -> list[str]:
        progress("optimizing the metadata tables")
        return list(lh.optimize())

    tables = with_lakehouse(ctx, as_json, work)
    if as_json:
        print_json({"optimized": tables})
    else:
        out.print(f"optimized {len(tables)} metadata tables")
