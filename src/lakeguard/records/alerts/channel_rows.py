"""The rows of where alerts go: notification channels and routes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.rows.schema import STAMPED, Comment, DefinitionTable


@dataclass(frozen=True, kw_only=True)
class ChannelRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="notification_channels",
        comment=(
            "Where alerts are sent: webhook, slack or email channels (docs/alerts.md); secrets "
            "only as references."
        ),
        keys=("tenant_id", "channel_id"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    channel_id: str
    kind: Annotated[str, Comment("webhook / slack / email")]
    destination_ref: Annotated[
        str | None, Comment("webhook, slack: where the URL is (env var or file), never the URL")
    ] = None
    recipients: Annotated[list[str] | None, Comment("email: the recipients' addresses")] = None
    signing_secret_ref: Annotated[
        str | None, Comment("webhook: where the whsec_ signing secret is, never the secret")
    ] = None
    options: Annotated[
        str | None,
        Comment("JSON object: the kind's other fields (mentions, smtp_host, timeout_seconds, ...)"),
    ] = None
    enabled: Annotated[bool, Comment("false: nothing is sent to it")] = True
    description: str | None = None
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None


@dataclass(frozen=True, kw_only=True)
class RouteRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="notification_routes",
        comment=(
            "Which events about which datasets go to which notification channel (docs/alerts.md)."
        ),
        keys=("tenant_id", "route_id"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    route_id: str
    channel_id: str
    events: Annotated[
        list[str],
        Comment("BLOCKED, FAILED, ALERT, WARN, STUCK, SLA_MISSED, RECOVERED; empty: all but WARN"),
    ] = field(default_factory=list)
    datasets: list[str] = field(default_factory=list)
    layers: list[str] = field(default_factory=list)
    domains: list[str] = field(default_factory=list)
    owners: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    min_severity: Annotated[str, Comment("info / warning / critical")] = "info"
    repeat_interval: Annotated[
        str, Comment("An open incident's repeats are sent at most once per this")
    ] = "4 hours"
    warn_share: Annotated[
        float | None, Comment("WARN events: a WARN rule whose failing share reaches this")
    ] = None
    enabled: bool = True
    description: str | None = None
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None
