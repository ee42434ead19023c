"""Notification channels and routes as definitions (no Spark): declared in the document,
validated with their paths, stored in the tenant's definition tables, planned, applied,
exported back, listed by `changes`, re-checked after a direct edit, and confined by the
tenant's reach like every other reference to a secret."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from deltalake import DeltaTable

from lakeguard.actors.catalog.apply import apply_file, plan_file
from lakeguard.actors.catalog.changes import definition_changes
from lakeguard.reads.reader import StoreReader
from lakeguard.rules.catalog.export import EXPORTED_TABLES, export_yaml
from lakeguard.rules.catalog.loader import validate_text
from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.store import MetadataStore
from lakeguard.words.errors import ValidationError
from lakeguard.words.vocabulary import AlertEvent, AlertSeverity, Layer
from openlaketx.config import LakehouseConfig
from tests.support.project import cells_yaml, copied_store, write

WAREHOUSE = "/warehouse"
ALERTS = """
notification_channels:
  - id: radio_hook
    kind: webhook
    url_ref: env:RADIO_HOOK_URL
    signing_secret_ref: file:secrets/radio_hook
  - id: radio_slack
    kind: slack
    url_ref: env:RADIO_SLACK_URL
    mentions: {radio-team: "<!subteam^S012AB3CD>"}
  - id: oncall_mail
    kind: email
    to: [oncall@example.com, radio@example.com]
    sender: laketx@example.com
    smtp_host: smtp.example.com
    username: laketx
    password_ref: env:SMTP_PASSWORD
notification_routes:
  - {id: radio_owner, channel: radio_hook, owners: [radio-team]}
  - id: silver_blocks
    channel: radio_slack
    events: [BLOCKED, STUCK, SLA_MISSED]
    layers: [silver]
    min_severity: warning
    repeat_interval: 30 minutes
  - {id: warn_mail, channel: oncall_mail, events: [WARN], warn_share: 0.05, tags: [critical]}
"""


def project(folder: Path, extra: str = ALERTS, suffix: str = "_a") -> Path:
    text = cells_yaml(suffix).replace(
        "    table: bronze.cells_a\n",
        "    table: bronze.cells_a\n    owner: radio-team\n    tags: [critical]\n",
    )
    return write(folder / "cells.yaml", text + extra)


@pytest.fixture
def store(empty_store_template: Path, tmp_path: Path) -> Iterator[MetadataStore]:
    yield copied_store(empty_store_template, tmp_path / "meta")


def export(store: MetadataStore) -> str:
    return export_yaml(
        StoreReader(store).definitions.stored_definitions(EXPORTED_TABLES), tenant="default"
    )


def test_the_document_declares_channels_and_routes_and_the_schema_shows_them() -> None:
    schema = MetadataDocument.model_json_schema()
    assert {"notification_channels", "notification_routes"} <= set(schema["properties"])
    text = cells_yaml("_a") + ALERTS
    doc = validate_text(text, "cells.yaml")
    kinds = [c.kind for c in doc.notification_channels]
    assert kinds == ["webhook", "slack", "email"]
    route = doc.notification_routes[1]
    assert route.events == [AlertEvent.BLOCKED, AlertEvent.STUCK, AlertEvent.SLA_MISSED]
    assert route.min_severity is AlertSeverity.WARNING and route.repeat_seconds == 1800


@pytest.mark.parametrize(
    ("extra", "path", "says"),
    [
        (
            "notification_channels:\n  - {id: c, kind: pager}\n",
            "notification_channels[0]",
            "unknown channel kind",
        ),
        (
            "notification_channels:\n  - {id: c, kind: webhook, url_ref: env:U}\n",
            "notification_channels[0].signing_secret_ref",
            "Field required",
        ),
        (
            "notification_channels:\n  - {id: c, kind: webhook, url: 'https://x', "
            "url_ref: env:U, signing_secret_ref: env:S}\n",
            "notification_channels[0].url",
            "Extra inputs",
        ),
        (
            "notification_channels:\n  - {id: c, kind: email, to: [not-an-address], "
            "sender: a@b.io, smtp_host: h}\n",
            "notification_channels[0].to[0]",
            "pattern",
        ),
        (
            "notification_channels:\n  - {id: c, kind: email, to: [a@b.io], sender: a@b.io, "
            "smtp_host: h, password_ref: env:P}\n",
            "notification_channels[0]",
            "username and password_ref",
        ),
        (
            "notification_routes:\n  - {id: r, channel: nowhere}\n",
            "notification_routes[0].channel",
            "unknown channel 'nowhere'",
        ),
        (
            "notification_channels:\n  - {id: c, kind: slack, url_ref: env:U}\n"
            "notification_routes:\n  - {id: r, channel: c, datasets: [ghost]}\n",
            "notification_routes[0].datasets[0]",
            "unknown dataset 'ghost'",
        ),
        (
            "notification_channels:\n  - {id: c, kind: slack, url_ref: env:U}\n"
            "notification_routes:\n  - {id: r, channel: c, events: [WARN]}\n",
            "notification_routes[0].warn_share",
            "warn_share",
        ),
        (
            "notification_channels:\n  - {id: c, kind: slack, url_ref: env:U}\n"
            "notification_routes:\n  - {id: r, channel: c, repeat_interval: soon}\n",
            "notification_routes[0].repeat_interval",
            "pattern",
        ),
    ],
)
def test_a_bad_channel_or_route_is_refused_with_its_path(extra: str, path: str, says: str) -> None:
    with pytest.raises(ValidationError) as caught:
        validate_text(cells_yaml("_a") + extra, "cells.yaml")
    found = {e["path"].split(" (line")[0]: e["message"] for e in caught.value.errors}
    assert path in found, found
    assert says in found[path]


def test_apply_stores_them_and_the_export_plans_nothing(
    store: MetadataStore, tmp_path: Path
) -> None:
    doc = project(tmp_path / "p")
    plan = apply_file(store, doc, WAREHOUSE)
    assert plan.summary()["notification_channels"]["create"] == 3
    assert plan.summary()["notification_routes"]["create"] == 3
    (hook,) = store.rows("notification_channels", filters=[("channel_id", "=", "radio_hook")])
    assert hook["destination_ref"] == "env:RADIO_HOOK_URL"
    assert hook["signing_secret_ref"] == "file:secrets/radio_hook"
    (mail,) = store.rows("notification_channels", filters=[("channel_id", "=", "oncall_mail")])
    assert list(mail["recipients"]) == ["oncall@example.com", "radio@example.com"]
    text = export(store)
    assert "notification_channels:" in text and "tags:\n  - critical" in text
    assert "repeat_interval: 30 minutes" in text and "min_severity: warning" in text
    validate_text(text, "export")
    again, _ = plan_file(store, write(tmp_path / "export.yaml", text), WAREHOUSE)
    assert [c for c in again.changes if c.action != "unchanged"] == []
    assert export(store) == text  # the same store, the same bytes
    # the run's definitions snapshot carries them, typed
    reg = StoreReader(store).definitions.registry()
    assert reg.problems == ()
    assert sorted(reg.channels) == ["oncall_mail", "radio_hook", "radio_slack"]
    assert reg.channels["oncall_mail"].spec.shown().startswith("email to oncall@example.com")
    silver = next(r for r in reg.routes if r.route_id == "silver_blocks")
    assert silver.layers == (Layer.SILVER,) and silver.repeat_seconds == 1800
    assert reg.datasets["bronze_cells_a"].tags == ("critical",)


def test_a_store_without_alerts_keeps_its_config_version(
    store: MetadataStore, tmp_path: Path
) -> None:
    apply_file(store, project(tmp_path / "p", extra=""), WAREHOUSE)
    before = StoreReader(store).definitions.registry().config_version
    apply_file(store, project(tmp_path / "p"), WAREHOUSE)
    assert (
        StoreReader(store).definitions.registry().config_version == before
    )  # alerts are not the run's


def test_changes_list_channels_and_routes(store: MetadataStore, tmp_path: Path) -> None:
    apply_file(store, project(tmp_path / "p", extra=""), WAREHOUSE)
    since = datetime.now(UTC).replace(tzinfo=None) + timedelta(milliseconds=5)
    apply_file(store, project(tmp_path / "p"), WAREHOUSE)
    report = definition_changes(store, since=since)
    said = {(c.kind, c.id, c.action) for c in report.changes}
    assert ("notification_channel", "radio_hook", "new") in said
    assert ("notification_route", "silver_blocks", "new") in said


def test_a_direct_edit_that_breaks_a_channel_refuses_only_it(
    store: MetadataStore, tmp_path: Path
) -> None:
    apply_file(store, project(tmp_path / "p"), WAREHOUSE)
    DeltaTable(store.location("notification_channels")).update(
        updates={"kind": "'pager'"}, predicate="channel_id = 'radio_slack'"
    )
    DeltaTable(store.location("notification_routes")).update(
        updates={"min_severity": "'loud'"}, predicate="route_id = 'warn_mail'"
    )
    reg = StoreReader(store).definitions.registry()
    wheres = {p.where: p for p in reg.problems}
    assert "notification_channels[channel_id=radio_slack]" in wheres
    assert wheres["notification_channels[channel_id=radio_slack]"].channels == {"radio_slack"}
    assert "notification_routes[route_id=warn_mail]" in wheres
    assert sorted(reg.channels) == ["oncall_mail", "radio_hook"]
    # the route to the broken channel, and the broken route, send nothing; the rest do
    assert [r.route_id for r in reg.routes] == ["radio_owner"]
    assert reg.refusal("bronze_cells_a") is None  # no dataset is blocked by where alerts go
    fix = wheres["notification_routes[route_id=warn_mail]"].fix
    assert "UPDATE notification_routes" in fix and "route_id = 'warn_mail'" in fix


def test_a_confined_tenant_names_only_its_own_secrets(tmp_path: Path) -> None:
    reach = LakehouseConfig(home=tmp_path, tenant="beta").tenant_reach()
    with pytest.raises(ValidationError) as caught:
        validate_text(cells_yaml("_a") + ALERTS, "cells.yaml", reach=reach)
    paths = {e["path"].split(" (line")[0] for e in caught.value.errors}
    assert "notification_channels[0].url_ref" in paths  # env:RADIO_HOOK_URL: not its prefix
    assert "notification_channels[0].signing_secret_ref" not in paths  # its secrets folder
    assert "notification_channels[2].smtp_host" in paths  # no network for beta
    allowed = ALERTS.replace("env:RADIO_HOOK_URL", "env:LAKETX_SECRET_BETA_HOOK")
    allowed = allowed.replace("env:RADIO_SLACK_URL", "env:LAKETX_SECRET_BETA_SLACK")
    allowed = allowed.replace("env:SMTP_PASSWORD", "env:LAKETX_SECRET_BETA_SMTP")
    with pytest.raises(ValidationError) as caught:
        validate_text(cells_yaml("_a") + allowed, "cells.yaml", reach=reach)
    paths = {e["path"].split(" (line")[0] for e in caught.value.errors}
    assert {p for p in paths if p.startswith("notification")} == {
        "notification_channels[2].smtp_host"
    }


def test_the_demo_routes_its_owner_to_a_webhook(store: MetadataStore, tmp_path: Path) -> None:
    from importlib import resources

    text = resources.files("openlaketx.demo").joinpath("cell_towers.yaml").read_text()
    doc = validate_text(text, "cell_towers.yaml")
    (channel,) = doc.notification_channels
    (route,) = doc.notification_routes
    assert channel.kind == "webhook" and route.owners == ["radio-data-team"]
    owned = {d.id for d in doc.datasets if d.owner == "radio-data-team"}
    assert owned == {"bronze_cell_towers", "silver_cell_towers"}
