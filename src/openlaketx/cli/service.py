"""`laketx serve`, `laketx scheduler` and `laketx keys`: the service's commands (thin, like
the rest of the CLI)."""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import typer

from lakeguard.actors.keys import ApiKey, Scope
from lakeguard.words.errors import ConfigError
from lakeguard.words.schedule import CatchUp
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
from openlaketx.config import LakehouseConfig
from openlaketx.render import rows_table

keys_app = typer.Typer(help="API keys of the service: create, list, revoke, rotate.")
app.add_typer(keys_app, name="keys")

_DURATION = re.compile(r"^\s*(\d+)\s*([smhd])\s*$")


def parse_duration(text: str) -> timedelta:
    """`90d`, `12h`, `30m`, `45s`."""
    match = _DURATION.match(text)
    if match is None:
        raise ConfigError(
            f"{text!r} is not a duration", fix="write it as a number and s, m, h or d: 90d"
        )
    unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[match.group(2)]
    return timedelta(**{unit: int(match.group(1))})


def _scopes(text: str) -> tuple[Scope, ...]:
    found = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if part not in set(Scope):
            raise ConfigError(
                f"unknown scope {part!r}",
                fix=f"scopes are {', '.join(s.value for s in Scope)}",
            )
        found.append(Scope(part))
    if not found:
        raise ConfigError("a key needs at least one scope", fix="pass --scopes runs:read")
    return tuple(found)


def _tenants(ctx: typer.Context) -> Any:
    # start-up time: the service's modules (and serve's web stack: fastapi, uvicorn) load
    # only for the commands that use them
    from openlaketx.service.tenants import Tenants

    return Tenants(config_of(ctx))


def _key_row(key: ApiKey) -> dict[str, object]:
    """A key as `laketx keys` shows it: its record, the scopes joined by commas."""
    return {**asdict(key), "scopes": ",".join(str(s) for s in key.scopes)}


@dataclass(frozen=True)
class PassLine:
    """What a scheduler pass did for one job, or a freshness SLA it found missed."""

    tenant: str
    job_id: str | None
    trigger: str
    run_id: str | None
    detail: str


@dataclass(frozen=True)
class NotifyLine:
    """An event a notify pass recorded, or a delivery it ended."""

    tenant: str
    what: str
    subject: str
    detail: str


@keys_app.command("create")
def keys_create(
    ctx: typer.Context,
    tenant: str = typer.Option(..., help="The tenant the key belongs to."),
    scopes: str = typer.Option(
        ..., help="runs:trigger, runs:read, keys:admin, definitions:write (comma-separated)."
    ),
    expires_in: str | None = typer.Option(None, help="e.g. 90d; default: never expires."),
    description: str | None = typer.Option(None),
    as_json: JsonFlag = False,
) -> None:
    """Create a key; its token is printed this once (only its hash is kept)."""

    def work() -> tuple[Any, str]:
        LakehouseConfig.check_tenant(tenant)
        return _tenants(ctx).keys.create(
            tenant,
            _scopes(scopes),
            expires_in=parse_duration(expires_in) if expires_in else None,
            description=description,
            created_by="cli",
        )

    key, token = guard(ctx, as_json, work)
    if as_json:
        print_json({**_key_row(key), "token": token})
    else:
        out.print(f"key {key.api_key_id} for tenant {key.tenant_id} ({', '.join(key.scopes)})")
        out.print(token, markup=False, highlight=False)
        err.print("store the token now: it is not shown again", highlight=False)


@keys_app.command("list")
def keys_list(
    ctx: typer.Context,
    tenant: str | None = typer.Option(None, help="Only this tenant's keys."),
    as_json: JsonFlag = False,
) -> None:
    """Keys with their tenant, scopes, expiry and last use (never a token or a hash)."""
    rows = guard(ctx, as_json, lambda: [_key_row(k) for k in _tenants(ctx).keys.list(tenant)])
    if as_json:
        print_json(rows)
    else:
        out.print(rows_table(rows, title="API keys"))


@keys_app.command("revoke")
def keys_revoke(ctx: typer.Context, key_id: str, as_json: JsonFlag = False) -> None:
    """Stop a key at once."""
    key = guard(ctx, as_json, lambda: _tenants(ctx).keys.revoke(key_id))
    if as_json:
        print_json(_key_row(key))
    else:
        out.print(f"revoked key {key.api_key_id} of tenant {key.tenant_id}")


@keys_app.command("rotate")
def keys_rotate(
    ctx: typer.Context,
    key_id: str,
    overlap: str = typer.Option("24h", help="How long the old key keeps working."),
    as_json: JsonFlag = False,
) -> None:
    """A new key for the same tenant and scopes; the old one stops after the overlap."""
    key, token = guard(
        ctx, as_json, lambda: _tenants(ctx).keys.rotate(key_id, parse_duration(overlap))
    )
    if as_json:
        print_json({**_key_row(key), "token": token, "replaces": key_id})
    else:
        out.print(f"key {key.api_key_id} replaces {key_id} (which stops in {overlap})")
        out.print(token, markup=False, highlight=False)


@app.command()
def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", help="Address to listen on."),
    port: int = typer.Option(8765, min=0, max=65535, help="Port (0: any free one)."),
    workers: int = typer.Option(2, min=1, max=64, help="Runs executed at once."),
    scheduler_every: float = typer.Option(
        5.0, min=0.0, help="Seconds between scheduler passes (0: no scheduler)."
    ),
    notify_every: float = typer.Option(
        5.0, min=0.0, help="Seconds between alert dispatcher passes (0: no dispatcher)."
    ),
    catch_up: CatchUp = typer.Option(CatchUp.LATEST, help="After downtime: latest or all."),
    drain_timeout: float = typer.Option(300.0, min=0.0, help="Seconds SIGTERM waits for runs."),
    watch: Path | None = typer.Option(
        None, help="Keep the YAML documents of this folder applied (as `laketx watch`)."
    ),
    watch_deactivate_missing: bool = typer.Option(
        False, help="With --watch: a removed document deactivates what it defined."
    ),
    settings: Path | None = typer.Option(
        None,
        help="A YAML file of settings: trusted proxies, limits and reach per tenant, the "
        "webhook window, the lakehouse and its object store (docs/service.md; default "
        "$LAKETX_SETTINGS).",
    ),
    warm_spark: bool = typer.Option(
        True, help="Start Spark now, in the background, so that the first run finds it warm."
    ),
) -> None:
    """Serve the HTTP API, run the scheduler and deliver alerts, with one warm Spark
    session."""
    # start-up time (see _tenants)
    from openlaketx.service.serve import serve as run_server
    from openlaketx.settings import SETTINGS_VARIABLE, ServiceSettings, env_settings

    if settings is not None:
        # the process's settings file, as LAKETX_SETTINGS names one: its lakehouse and object
        # store sections are read where they are used, this process's runs included
        os.environ[SETTINGS_VARIABLE] = str(settings.expanduser().resolve())
    guard(
        ctx,
        False,
        lambda: run_server(
            config_of(ctx),
            host=host,
            port=port,
            workers=workers,
            scheduler_every=scheduler_every,
            notify_every=notify_every,
            catch_up=catch_up,
            drain_timeout=drain_timeout,
            watch=watch,
            watch_deactivate_missing=watch_deactivate_missing,
            settings=env_settings() or ServiceSettings(),
            warm_spark=warm_spark,
            announce=lambda m: err.print(m, highlight=False, markup=False),
        ),
    )


@app.command()
def scheduler(
    ctx: typer.Context,
    once: bool = typer.Option(False, "--once", help="One pass, then wait for its runs."),
    now: datetime | None = typer.Option(
        None, help="Evaluate schedules as of this UTC time (default: now)."
    ),
    catch_up: CatchUp = typer.Option(CatchUp.LATEST, help="After downtime: latest or all."),
    as_json: JsonFlag = False,
) -> None:
    """Run due schedules and triggers (from cron or an orchestrator: `--once`)."""
    # start-up time (see _tenants)
    from openlaketx.service.runs import RunService
    from openlaketx.service.scheduler import Scheduler

    if not once:
        raise typer.BadParameter("use --once (or `laketx serve`, which runs the scheduler)")

    def work() -> list[PassLine]:
        runs = RunService(_tenants(ctx), workers=1)
        when = now.replace(tzinfo=None) if now else None
        # a pass as of `now`: ticks before it are due, those claimed already are not
        passes = Scheduler(runs, catch_up=catch_up)
        if when is not None:
            passes.clock = lambda: when
        fired = passes.tick()
        runs.wait_idle(timeout=24 * 3600)
        runs.drain(0)
        missed = [PassLine(m.tenant_id, None, "freshness", None, m.title) for m in passes.missed]
        return [PassLine(f.tenant, f.job_id, f.trigger, f.run_id, f.detail) for f in fired] + missed

    rows = guard(ctx, as_json, work)
    if as_json:
        print_json(rows)
    else:
        out.print(rows_table(rows, title="scheduler pass"))


@app.command()
def notify(
    ctx: typer.Context,
    once: bool = typer.Option(False, "--once", help="One pass: record new events, deliver."),
    as_json: JsonFlag = False,
) -> None:
    """Deliver alerts (docs/alerts.md): record the events of new run rows and send the
    deliveries that are due (from cron: `--once`; `laketx serve` runs it every few seconds)."""
    # start-up time (see _tenants)
    from openlaketx.service.dispatcher import Dispatcher

    if not once:
        raise typer.BadParameter("use --once (or `laketx serve`, which runs the dispatcher)")

    def work() -> list[NotifyLine]:
        done = Dispatcher(_tenants(ctx)).tick()
        rows = [
            NotifyLine(e.tenant_id, f"{e.action} {e.cause}", e.subject, e.title)
            for e in done.recorded
        ]
        rows += [
            NotifyLine(
                d.tenant_id,
                str(d.action),
                d.channel_id,
                d.error or f"attempt {d.attempt} of {d.delivery_id}",
            )
            for d in done.delivered
        ]
        return rows

    rows = guard(ctx, as_json, work)
    if as_json:
        print_json(rows)
    else:
        out.print(rows_table(rows, title="notify pass") if rows else "nothing to deliver")


@app.command()
def alerts(
    ctx: typer.Context,
    incident: str | None = typer.Argument(None, help="One incident: its events and deliveries."),
    status: str = typer.Option("all", help="open, resolved or all."),
    limit: int = typer.Option(50, min=1, max=1000),
    as_json: JsonFlag = False,
) -> None:
    """The alert incidents (docs/alerts.md): one per dataset and cause, with its events and
    where each was delivered. No Spark."""
    # start-up time (see _tenants)
    from openlaketx.service import alerts as incidents

    if status not in ("open", "resolved", "all"):
        raise typer.BadParameter("--status is open, resolved or all")

    def work(lh: Any, _: Any) -> Any:
        if incident is not None:
            return incidents.incident(lh, incident)
        return incidents.incidents(lh, status, limit)  # type: ignore[arg-type]

    found = with_lakehouse(ctx, as_json, work)
    if as_json:
        print_json(found.model_dump(mode="json"))
        return
    if incident is not None:
        out.print(
            f"incident {found.incident_id}: {found.cause} of {found.subject}, {found.status} "
            f"({found.severity}), opened {found.opened_at:%Y-%m-%d %H:%M:%S}, "
            f"{found.repeats} repeat(s)",
            highlight=False,
            markup=False,
        )
        for event in found.events:
            out.print(f"\n{event.action} at {event.occurred_at:%Y-%m-%d %H:%M:%S}: {event.title}")
            out.print(event.explain, highlight=False, markup=False)
            rows = [
                {
                    "channel": d.channel_id,
                    "route": d.route_id,
                    "action": d.action,
                    "attempt": d.attempt,
                    "status": d.status_code,
                    "at": d.at,
                    "error": d.error,
                }
                for d in event.deliveries
            ]
            if rows:
                out.print(rows_table(rows, title="deliveries"))
        return
    rows = [
        {
            "incident": i.incident_id,
            "subject": i.subject,
            "cause": i.cause,
            "severity": i.severity,
            "status": i.status,
            "opened": i.opened_at,
            "last seen": i.last_seen,
            "repeats": i.repeats,
            "sent": sum(1 for e in i.events for d in e.deliveries if d.action == "SENT"),
            "title": i.title,
        }
        for i in found.incidents
    ]
    out.print(rows_table(rows, title="incidents") if rows else "no incidents")
