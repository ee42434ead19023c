"""The alerting part of a metadata document: notification channels (typed by their kind,
`lakeguard.records.alerts.channels`) and the routes that send events to them (docs/alerts.md)."""

from __future__ import annotations

from pydantic import Field, field_validator

from lakeguard.records.alerts.channel_rows import RouteRow
from lakeguard.records.alerts.channels import NotificationChannel
from lakeguard.words.durations import DURATION, seconds
from lakeguard.words.fields import Identifier, Strict
from lakeguard.words.vocabulary import AlertEvent, AlertSeverity, Layer

__all__ = ["DEFAULT_REPEAT", "NotificationChannel", "NotificationRoute"]

# the defaults a stored row's NULL also reads as are its row class's
# (`records/alerts/channel_rows.py`)
DEFAULT_REPEAT = RouteRow.repeat_interval


class NotificationRoute(Strict):
    """Which events, about which datasets, go to which channel. Every filter given must
    match (a list matches when the dataset has any of its values; an empty one matches all):
    `datasets`, `layers`, `domains`, `owners` (an owner's datasets to the owner's channel),
    `tags`. A job's own failure (none of its datasets failed) matches the routes that filter
    on nothing."""

    id: Identifier
    channel: Identifier = Field(description="The notification channel it sends to")
    events: list[AlertEvent] = Field(
        default_factory=list,
        description="The events it sends (default: all but WARN, which needs warn_share); the "
        "resolution of an incident goes wherever its cause went",
    )
    datasets: list[Identifier] = Field(default_factory=list)
    layers: list[Layer] = Field(default_factory=list)
    domains: list[str] = Field(default_factory=list)
    owners: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    min_severity: AlertSeverity = Field(
        default=AlertSeverity(RouteRow.min_severity),
        description="Events below it are not sent (info, warning, critical)",
    )
    repeat_interval: str = Field(
        default=DEFAULT_REPEAT,
        pattern=DURATION,
        description="An open incident's repeats are sent at most once per this ('30 minutes', "
        "'4 hours', '1 day')",
    )
    warn_share: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Send WARN events: a WARN rule whose failing share reaches this",
    )
    enabled: bool = RouteRow.enabled
    description: str | None = None

    @field_validator("repeat_interval")
    @classmethod
    def _positive(cls, value: str) -> str:
        if not seconds(value):
            raise ValueError("a repeat interval is longer than 0 seconds")
        return value

    @property
    def repeat_seconds(self) -> int:
        return seconds(self.repeat_interval) or 0
