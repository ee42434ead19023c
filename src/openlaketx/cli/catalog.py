"""`laketx validate`, `schema`, `init`, `plan` and `apply`: metadata as code and the store
(none of them starts a JVM)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from lakeguard.rules.catalog.loader import load_file
from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.words.errors import ExitCode
from openlaketx import render
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


# -- metadata as code (no Spark) -----------------------------------------------------------
@app.command()
def validate(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="YAML metadata document."),
    as_json: JsonFlag = False,
) -> None:
    """Validate a metadata document; reports every error with its path. Writes nothing.
    What it names (paths, secrets, destinations) is checked against the tenant's reach."""
    doc = guard(ctx, as_json, lambda: load_file(file, reach=config_of(ctx).tenant_reach()))
    counts = {
        k: len(getattr(doc, k))
        for k in ("source_systems", "source_objects", "datasets", "rules", "jobs")
    }
    if as_json:
        print_json({"valid": True, "file": str(file), "counts": counts})
    else:
        summary = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in counts.items())
        out.print(f"[green]valid[/] {file}: {summary}")


@app.command()
def schema() -> None:
    """Print the JSON Schema of metadata documents (for editors)."""
    print_json(MetadataDocument.model_json_schema())


# -- store and catalog ---------------------------------------------------------------------
@app.command()
def init(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Create (or evolve) the metadata store under the lakehouse folder."""

    lh = with_lakehouse(ctx, as_json, lambda lh, _: lh)
    tables = lh.store.tables()
    if as_json:
        print_json(
            {
                "namespace": lh.store.namespace,
                "home": str(lh.config.home),
                "metadata": lh.store.root,
                "tables": tables,
            }
        )
    else:
        out.print(
            f"metadata store [bold]{lh.store.namespace}[/] ready at {lh.store.root} "
            f"({len(tables)} tables)"
        )


def _plan_command(ctx: typer.Context, file: Path, as_json: bool, do_apply: bool) -> None:
    # fail fast, before the store opens
    guard(ctx, as_json, lambda: load_file(file, reach=config_of(ctx).tenant_reach()))

    def work(lh: Any, progress: Callable[[str], None]) -> Any:
        progress("applying" if do_apply else "planning")
        return lh.apply(file) if do_apply else lh.plan(file)

    plan = with_lakehouse(ctx, as_json, work)
    if as_json:
        print_json({"applied": do_apply, "summary": plan.summary(), "conflicts": plan.conflicts})
        return
    out.print(render.plan_table(plan, applied=do_apply))
    if plan.conflicts:
        for c in plan.conflicts:
            err.print(f"[red]conflict[/] {c['path']}: {c['message']}")
        raise typer.Exit(ExitCode.INVALID)


@app.command()
def plan(ctx: typer.Context, file: Path, as_json: JsonFlag = False) -> None:
    """Show what `apply` would change. Writes nothing."""
    _plan_command(ctx, file, as_json, do_apply=False)


@app.command()
def apply(ctx: typer.Context, file: Path, as_json: JsonFlag = False) -> None:
    """Upsert a document's definitions into the control tables (idempotent)."""
    _plan_command(ctx, file, as_json, do_apply=True)
