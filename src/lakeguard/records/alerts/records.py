"""Records of the alerting definitions: notification channels (their kind's typed model)
and routes."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError as PydanticError

from lakeguard.records.alerts.channel_rows import ChannelRow, RouteRow
from lakeguard.records.alerts.channels import CHANNEL_KINDS, ChannelKind
from lakeguard.records.rows.parsing import json_or, str_tuple
from lakeguard.words.durations import seconds
from lakeguard.words.errors import ValidationError
from lakeguard.words.vocabulary import AlertEvent, AlertSeverity, Layer, vocab

DEFAULT_REPEAT_SECONDS: int = seconds(RouteRow.repeat_interval) or 0


@dataclass(frozen=True, kw_only=True, slots=True)
class ChannelDef:
    """A notification channel: its id and its kind's model (secret references, never
    secrets)."""

    channel_id: str
    spec: ChannelKind

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def enabled(self) -> bool:
        return self.spec.enabled

    @classmethod
    def from_row(cls, row: ChannelRow) -> ChannelDef:
        where = f"notification_channels[{row.channel_id}]"
        kind = CHANNEL_KINDS.get(row.kind)
        if kind is None:
            allowed = ", ".join(CHANNEL_KINDS)
            raise ValidationError(
                f"{where}.kind is {row.kind!r}, not one of {allowed}",
                where=where,
                errors=[{"path": f"{where}.kind", "message": f"not one of {allowed}"}],
            )
        entry = kind.entry(row, dict(json_or(row.options, {})))
        try:
            spec = kind.model_validate({k: v for k, v in entry.items() if v is not None})
        except PydanticError as exc:
            message = "; ".join(e["msg"] for e in exc.errors())
            raise ValidationError(
                f"{where} is not a valid {kind.NAME.value} channel: {message}",
                where=where,
                errors=[{"path": where, "message": message}],
            ) from None
        return cls(channel_id=row.channel_id, spec=spec)


@dataclass(frozen=True, kw_only=True, slots=True)
class RouteDef:
    """Which events about which datasets go to which channel."""

    route_id: str
    channel_id: str
    events: tuple[AlertEvent, ...] = ()  # empty: all but WARN
    datasets: tuple[str, ...] = ()
    layers: tuple[Layer, ...] = ()
    domains: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    min_severity: AlertSeverity = AlertSeverity.INFO
    repeat_seconds: int = DEFAULT_REPEAT_SECONDS
    warn_share: float | None = None
    enabled: bool = True

    @classmethod
    def from_row(cls, row: RouteRow) -> RouteDef:
        where = f"notification_routes[{row.route_id}]"
        return cls(
            route_id=row.route_id,
            channel_id=row.channel_id,
            events=tuple(vocab(AlertEvent, e, f"{where}.events") for e in row.events),
            datasets=str_tuple(row.datasets),
            layers=tuple(vocab(Layer, x, f"{where}.layers") for x in row.layers),
            domains=str_tuple(row.domains),
            owners=str_tuple(row.owners),
            tags=str_tuple(row.tags),
            min_severity=vocab(AlertSeverity, row.min_severity, f"{where}.min_severity"),
            # an interval edited into one no duration parses is the default, as its export says
            repeat_seconds=seconds(row.repeat_interval) or DEFAULT_REPEAT_SECONDS,
            warn_share=row.warn_share,
            enabled=row.enabled,
        )
