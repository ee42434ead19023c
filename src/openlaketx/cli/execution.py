"""`laketx run`, `sql`, `runs`, `status`, `read` (`show`), `explain` and `demo`: running
datasets and reading what they made."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from openlaketx import render
from openlaketx.cli.shared import (
    JsonFlag,
    app,
    config_of,
    guard,
    options_of,
    out,
    print_json,
    stopped_by_sigterm,
    with_lakehouse,
)

if TYPE_CHECKING:
    from openlaketx.render import Rows


# -- execution -----------------------------------------------------------------------------
@app.command()
def run(
    ctx: typer.Context,
    target: str = typer.Argument(..., help="A job id or a dataset id."),
    as_json: JsonFlag = False,
    triggered_by: str = typer.Option("cli", help="Who or what triggered the run."),
    wait: float = typer.Option(
        0.0,
        min=0.0,
        help="Seconds to wait for another run holding a dataset of this one (default: exit 9).",
    ),
    master: str | None = typer.Option(
        None, help="Spark master for this run, e.g. spark://host:7077 (as the global option)."
    ),
    remote: str | None = typer.Option(
        None, help="A Spark Connect server for this run, sc://host:port (as the global option)."
    ),
) -> None:
    """Run a job (or one dataset) through the governed write path."""
    opts = options_of(ctx)
    opts.master = master or opts.master
    opts.remote = remote or opts.remote
    ctx.obj = opts

    def work(lh: Any, progress: Callable[[str], None]) -> Any:
        return lh.run(
            target, trigger_type="manual", triggered_by=triggered_by, progress=progress, wait=wait
        )

    with stopped_by_sigterm():
        result = with_lakehouse(ctx, as_json, work)
    if as_json:
        print_json(render.job_result_dict(result))
    else:
        out.print(render.job_result_table(result))
    if result.exit_code:
        raise typer.Exit(result.exit_code)


def _query_command(
    ctx: typer.Context,
    as_json: bool,
    title: str,
    fetch: Callable[[Any], Rows],
    hide: tuple[str, ...] = (),
) -> None:
    rows = with_lakehouse(ctx, as_json, lambda lh, _: fetch(lh))
    if as_json:
        print_json(rows)
    else:
        out.print(render.rows_table(rows, title=title, hide=hide))


@app.command()
def sql(
    ctx: typer.Context,
    query: str = typer.Argument(
        ..., help="A Spark SQL query; metadata tables are <namespace>.<table>."
    ),
    as_json: JsonFlag = False,
    limit: int = typer.Option(1000, help="At most this many rows are printed."),
) -> None:
    """Run a SQL query against the lakehouse (metadata, datasets, quarantine)."""
    _query_command(
        ctx,
        as_json,
        "",
        lambda lh: [r.asDict(recursive=True) for r in lh.sql(query).limit(limit).collect()],
    )


@app.command()
def runs(ctx: typer.Context, limit: int = typer.Option(20), as_json: JsonFlag = False) -> None:
    """The latest job runs with their outcome (PROMOTED, HELD, FAILED, RUNNING, PENDING: the
    words of the dashboard and the API). Reads metadata only: no Spark."""
    _query_command(
        ctx, as_json, "runs", lambda lh: render.run_lines(lh.runs(limit)), hide=("status",)
    )


@app.command()
def status(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Each registered dataset with its approved version and last attempt. No Spark."""
    _query_command(
        ctx, as_json, "datasets", lambda lh: render.status_lines(lh.status()), hide=("last_status",)
    )


@app.command()
def read(
    ctx: typer.Context,
    dataset: str,
    version: int | None = typer.Option(None, help="An approved data version (default: latest)."),
    limit: int = typer.Option(20),
    as_json: JsonFlag = False,
) -> None:
    """Rows of the latest approved snapshot of a dataset (never an unapproved commit)."""
    _query_command(
        ctx,
        as_json,
        dataset,
        lambda lh: [
            r.asDict(recursive=True) for r in lh.read(dataset, version).limit(limit).collect()
        ],
    )


app.command("show", help="Alias of `read`.")(read)


@app.command()
def explain(
    ctx: typer.Context,
    dataset: str,
    run: str | None = typer.Option(None, help="A dataset attempt's run id (default: latest)."),
    as_json: JsonFlag = False,
) -> None:
    """Why a promotion was allowed or blocked, and what to change. No Spark."""

    decision = with_lakehouse(ctx, as_json, lambda lh, _: lh.explain(dataset, run))
    if as_json:  # the evidence in the shape it is stored in (promotion_status.evidence)
        print_json(decision.to_json())
    else:
        out.print(render.explain_panel(decision))


@app.command()
def demo(
    ctx: typer.Context,
    rows: int = typer.Option(20_000, min=100, help="Cells in the generated feed."),
    as_json: JsonFlag = False,
) -> None:
    """Generate an OpenCellID-like feed, declare it, and run it through bronze and silver."""
    # start-up time: the demo's modules load only for `laketx demo`
    from openlaketx.demo.scenario import run_demo, summarize

    lh, demo_runs = with_lakehouse(
        ctx, as_json, lambda lh, progress: (lh, run_demo(lh, rows=rows, progress=progress))
    )
    summary = guard(ctx, as_json, lambda: summarize(lh, demo_runs))
    if as_json:
        print_json(summary)
    else:
        render.print_demo(out, summary)


@app.command("connect-server")
def connect_server(
    ctx: typer.Context,
    port: int = typer.Option(15002, help="The port the server listens on (gRPC)."),
    host: str = typer.Option("127.0.0.1", help="The address it binds."),
) -> None:
    """Run a Spark Connect server with the Delta settings the engine needs, in the foreground
    (for `laketx --remote sc://HOST:PORT`; development and tests). Its master is --master."""
    from openlaketx.connect import serve  # start-up time: only this command loads it

    guard(ctx, False, lambda: serve(config_of(ctx), port, host))
