"""The `laketx` app and what every command module shares: the global options, the `--json`
flag, the error handler (one clean line and a documented exit code), the consoles and JSON
printing. Command modules import this one; it imports none of them (`cli/__init__.py`
assembles them)."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from lakeguard.words.errors import ExitCode, LakeTxError, first_line
from openlaketx.config import LakehouseConfig, parse_conf_flags

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
    remote: str | None = None
    conf: list[str] = field(default_factory=list)
    debug: bool = False


def options_of(ctx: typer.Context) -> Options:
    """The global options given before the command."""
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
        None, help="Spark master, e.g. local[*] or spark://host:7077 (default $LAKETX_MASTER)."
    ),
    remote: str | None = typer.Option(
        None,
        help="A Spark Connect server, sc://host:port, instead of a driver here "
        "(default $LAKETX_REMOTE).",
    ),
    conf: list[str] = typer.Option([], "--conf", help="Spark conf key=value (repeatable)."),
    debug: bool = typer.Option(False, help="Show tracebacks."),
) -> None:
    ctx.obj = Options(home, namespace, tenant, master, remote, conf, debug)


def _fail(exc: BaseException, as_json: bool, debug: bool) -> None:
    if debug:
        err.print_exception()
    payload: Mapping[str, object]
    if isinstance(exc, LakeTxError):
        payload, code = exc.to_dict(), exc.exit_code
        text = exc.message
    else:
        first = first_line(exc)
        payload = {"error": type(exc).__name__, "what": first}
        text = f"{type(exc).__name__}: {first} (run with --debug for the traceback)"
        code = ExitCode.FAILED
    if as_json:
        out.print_json(json.dumps(payload, default=str))
    else:
        lines = text.splitlines()
        # the message is text, not markup: `section [prod]` keeps its brackets
        err.print(f"[bold red]error:[/] {escape(lines[0])}", highlight=False, soft_wrap=True)
        for line in lines[1:]:
            err.print(line, highlight=False, soft_wrap=True, markup=False)
    raise typer.Exit(code)


class Stopped(KeyboardInterrupt):
    """SIGTERM, raised where the main thread is, so that the run it interrupts unwinds as on
    Ctrl-C: its attempt and its run are recorded FAILED and its leases given back."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


@contextmanager
def stopped_by_sigterm() -> Iterator[None]:
    """While inside, SIGTERM raises `Stopped` (the default would end the process at once,
    leaving the run RUNNING until the next run or `laketx reap`)."""

    def stop(signum: int, frame: object) -> None:
        raise Stopped(signum)

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread: whoever owns it handles signals
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def guard(ctx: typer.Context, as_json: bool, action: Callable[[], T]) -> T:
    """`action()`, any error ending the command as one clean line with its exit code."""
    try:
        return action()
    except typer.Exit:
        raise
    except Stopped as stopped:
        err.print(f"[red]{escape(str(stopped))}: the run was recorded FAILED[/]")
        raise typer.Exit(128 + stopped.signum) from None
    except KeyboardInterrupt:
        err.print("[red]interrupted[/]")
        raise typer.Exit(130) from None
    except Exception as exc:
        _fail(exc, as_json, options_of(ctx).debug)
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


def config_of(ctx: typer.Context) -> LakehouseConfig:
    """The lakehouse settings: defaults, `LAKETX_*`, then the global flags."""
    opts = options_of(ctx)
    return LakehouseConfig.from_env(
        home=opts.home,
        namespace=opts.namespace,
        tenant=opts.tenant,
        master=opts.master,
        remote=opts.remote,
        spark_conf=parse_conf_flags(opts.conf),
    )


def _open(ctx: typer.Context, progress: Callable[[str], None]) -> Any:
    # start-up time: the facade loads the engine's modules, which validate, schema, keys and
    # --help never need
    from openlaketx.lakehouse import Lakehouse

    cfg = config_of(ctx)
    progress("opening the metadata store")
    return Lakehouse.open(cfg)


def with_lakehouse(
    ctx: typer.Context, as_json: bool, work: Callable[[Any, Callable[[str], None]], T]
) -> T:
    """Open the lakehouse under a spinner and run `work(lakehouse, progress)`, errors handled."""

    def action() -> T:
        with _spinner("starting", as_json) as progress:
            return work(_open(ctx, progress), progress)

    return guard(ctx, as_json, action)


def print_json(value: object) -> None:
    """A command's result as indented JSON on standard output: a record (a dataclass), or a
    list of them, as its fields."""
    sys.stdout.write(json.dumps(_fields(value), default=str, indent=2) + "\n")


def _fields(value: object) -> object:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, list):
        return [_fields(v) for v in value]
    return value
