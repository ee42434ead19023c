"""`laketx`: a thin CLI over the Lakehouse facade. Parses, calls, prints.

Human output by default (rich tables, a spinner while Spark works), `--json` for machines, one
clean error line with a documented exit code on failure (`--debug` shows the traceback).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from lakeguard.errors import LakeTxError, ValidationError, first_line
from lakeguard.shapes import StoredRow
from openlaketx import render

app = typer.Typer(
    name="laketx",
    help="OpenLakeTx + LakeGuard: governed ingestion on Spark and Delta Lake.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console(soft_wrap=True)  # never cut a line at the width: a pipe gets every id whole
err = Console(stderr=True)
T = TypeVar("T")
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for machines.")]


@dataclass
class Options:
    home: Path | None = None
    namespace: str | None = None
    tenant: str | None = None
    master: str | None = None
    conf: list[str] = field(default_factory=list)
    debug: bool = False


def _options(ctx: typer.Context) -> Options:
    return ctx.obj if isinstance(ctx.obj, Options) else Options()


@app.callback()
def main_options(
    ctx: typer.Context,
    home: Path | None = typer.Option(
        None, help="Lakehouse folder (default $LAKETX_HOME or ./lakehouse)."
    ),
    namespace: str | None = typer.Option(None, help="Metadata namespace (default lakeguard)."),
    tenant: str | None = typer.Option(None, help="Tenant id (default 'default')."),
    master: str | None = typer.Option(
        None, help="Spark master, e.g. local[*] or spark://host:7077."
    ),
    conf: list[str] = typer.Option([], "--conf", help="Spark conf key=value (repeatable)."),
    debug: bool = typer.Option(False, help="Show tracebacks."),
) -> None:
    ctx.obj = Options(home, namespace, tenant, master, conf, debug)


def _fail(exc: BaseException, as_json: bool, debug: bool) -> None:
    if debug:
        err.print_exception()
    if isinstance(exc, LakeTxError):
        payload, code = exc.to_dict(), exc.exit_code
        text = exc.message
    else:
        first = first_line(exc)
        payload = {"error": type(exc).__name__, "what": first}
        text, code = f"{type(exc).__name__}: {first} (run with --debug for the traceback)", 1
    if as_json:
        out.print_json(json.dumps(payload, default=str))
    else:
        lines = text.splitlines()
        err.print(f"[bold red]error:[/] {lines[0]}", highlight=False, soft_wrap=True)
        for line in lines[1:]:
            err.print(line, highlight=False, soft_wrap=True, markup=False)
    raise typer.Exit(code)


def _guard(ctx: typer.Context, as_json: bool, action: Callable[[], T]) -> T:
    try:
        return action()
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        err.print("[red]interrupted[/]")
        raise typer.Exit(130) from None
    except Exception as exc:
        _fail(exc, as_json, _options(ctx).debug)
        raise  # unreachable: _fail exits


@contextmanager
def _spinner(message: str, quiet: bool) -> Iterator[Callable[[str], None]]:
    if quiet:
        yield lambda _m: None
        return
    if not err.is_terminal:  # logs and pipes get one plain line per step instead of a spinner
        yield lambda m: err.print(f"… {m}", highlight=False, markup=False)
        return
    with err.status(message) as status:
        yield lambda m: status.update(m)


def config_of(ctx: typer.Context) -> Any:
    """The lakehouse settings: defaults, `LAKETX_*`, then the global flags."""
    from openlaketx.config import LakehouseConfig, parse_conf_flags

    opts = _options(ctx)
    return LakehouseConfig.from_env(
        home=opts.home,
        namespace=opts.namespace,
        tenant=opts.tenant,
        master=opts.master,
        spark_conf=parse_conf_flags(opts.conf),
    )


def _open(ctx: typer.Context, progress: Callable[[str], None]) -> Any:
    from openlaketx.lakehouse import Lakehouse

    cfg = config_of(ctx)
    progress("opening the metadata store")
    return Lakehouse.open(cfg)


def _with_lakehouse(
    ctx: typer.Context, as_json: bool, work: Callable[[Any, Callable[[str], None]], T]
) -> T:
    """Open the lakehouse under a spinner and run `work(lakehouse, progress)`, errors handled."""

    def action() -> T:
        with _spinner("starting", as_json) as progress:
            return work(_open(ctx, progress), progress)

    return _guard(ctx, as_json, action)


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, default=str, indent=2) + "\n")


# -- metadata as code (no Spark) -----------------------------------------------------------
@app.command()
def validate(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="YAML metadata document."),
    as_json: JsonFlag = False,
) -> None:
    """Validate a metadata document; reports every error with its path. Writes nothing."""
    from lakeguard.catalog.loader import load_file

    doc = _guard(ctx, as_json, lambda: load_file(file))
    counts = {
        k: len(getattr(doc, k))
        for k in ("source_systems", "source_objects", "datasets", "rules", "jobs")
    }
    if as_json:
        _print_json({"valid": True, "file": str(file), "counts": counts})
    else:
        summary = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in counts.items())
        out.print(f"[green]valid[/] {file}: {summary}")


@app.command()
def schema() -> None:
    """Print the JSON Schema of metadata documents (for editors)."""
    from lakeguard.catalog.models import MetadataDocument

    _print_json(MetadataDocument.model_json_schema())


# -- store and catalog ---------------------------------------------------------------------
@app.command()
def init(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Create (or evolve) the metadata store under the lakehouse folder."""

    lh = _with_lakehouse(ctx, as_json, lambda lh, _: lh)
    tables = lh.store.tables()
    if as_json:
        _print_json(
            {"namespace": lh.store.namespace, "home": str(lh.config.home), "tables": tables}
        )
    else:
        out.print(
            f"metadata store [bold]{lh.store.namespace}[/] ready at {lh.config.home} "
            f"({len(tables)} tables)"
        )


def _plan_command(ctx: typer.Context, file: Path, as_json: bool, do_apply: bool) -> None:
    from lakeguard.catalog.loader import load_file

    _guard(ctx, as_json, lambda: load_file(file))  # fail fast, before Spark starts

    def work(lh: Any, progress: Callable[[str], None]) -> Any:
        progress("applying" if do_apply else "planning")
        return lh.apply(file) if do_apply else lh.plan(file)

    plan = _with_lakehouse(ctx, as_json, work)
    if as_json:
        _print_json({"applied": do_apply, "summary": plan.summary(), "conflicts": plan.conflicts})
        return
    out.print(render.plan_table(plan, applied=do_apply))
    if plan.conflicts:
        for c in plan.conflicts:
            err.print(f"[red]conflict[/] {c['path']}: {c['message']}")
        raise typer.Exit(ValidationError.exit_code)


@app.command()
def plan(ctx: typer.Context, file: Path, as_json: JsonFlag = False) -> None:
    """Show what `apply` would change. Writes nothing."""
    _plan_command(ctx, file, as_json, do_apply=False)


@app.command()
def apply(ctx: typer.Context, file: Path, as_json: JsonFlag = False) -> None:
    """Upsert a document's definitions into the control tables (idempotent)."""
    _plan_command(ctx, file, as_json, do_apply=True)


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
) -> None:
    """Run a job (or one dataset) through the governed write path."""

    def work(lh: Any, progress: Callable[[str], None]) -> Any:
        progress("starting Spark")
        return lh.run(
            target, trigger_type="manual", triggered_by=triggered_by, progress=progress, wait=wait
        )

    result = _with_lakehouse(ctx, as_json, work)
    if as_json:
        _print_json(render.job_result_dict(result))
    else:
        out.print(render.job_result_table(result))
    if result.exit_code:
        raise typer.Exit(result.exit_code)


def _query_command(
    ctx: typer.Context, as_json: bool, title: str, fetch: Callable[[Any], list[StoredRow]]
) -> None:
    rows = _with_lakehouse(ctx, as_json, lambda lh, _: fetch(lh))
    if as_json:
        _print_json(rows)
    else:
        out.print(render.rows_table(rows, title=title))


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
    """The latest job runs with their terminal status. Reads metadata only: no Spark."""
    _query_command(ctx, as_json, "runs", lambda lh: [asdict(r) for r in lh.runs(limit)])


@app.command()
def status(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Each registered dataset with its approved version and last attempt. No Spark."""
    _query_command(ctx, as_json, "datasets", lambda lh: [asdict(s) for s in lh.status()])


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

    decision = _with_lakehouse(ctx, as_json, lambda lh, _: lh.explain(dataset, run))
    if as_json:  # the evidence in the shape it is stored in (promotion_status.evidence)
        _print_json(decision.to_json())
    else:
        out.print(render.explain_panel(decision))


@app.command()
def demo(
    ctx: typer.Context,
    rows: int = typer.Option(20_000, min=100, help="Cells in the generated feed."),
    as_json: JsonFlag = False,
) -> None:
    """Generate an OpenCellID-like feed, declare it, and run it through bronze and silver."""
    from openlaketx.demo.scenario import run_demo, summarize

    lh, demo_runs = _with_lakehouse(
        ctx, as_json, lambda lh, progress: (lh, run_demo(lh, rows=rows, progress=progress))
    )
    summary = _guard(ctx, as_json, lambda: summarize(lh, demo_runs))
    if as_json:
        _print_json(summary)
    else:
        render.print_demo(out, summary)


# Light command groups register on import of `app` itself (a module of their own each; the
# service's and metadata's commands stay lazy in `main`: they import more).
from openlaketx import cli_audit  # noqa: E402, F401 - registers verify, replay, reap, optimize


def main() -> None:
    """Console entry point: a missing prerequisite is one line, not a traceback."""
    from openlaketx import (
        cli_metadata,  # noqa: F401 - registers export, changes, watch
        cli_service,  # noqa: F401 - registers serve, scheduler, keys
    )

    app()
