"""Notification channel kinds: one module each, registered here, the one list of them (pure).

Adding a kind is one module with its `ChannelKind` subclass (a `kind` Literal, its typed
fields, the secret references it holds, which shared columns its fields fill), its entry in
`KINDS` below, a member of `vocabulary.ChannelKindName`, and its sender in
`openlaketx.service.notify` (whose registry refuses to load without one). This registry refuses
to load when a module or a vocabulary member is left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import Discriminator, Tag

from lakeguard.records.alerts.channels.base import SHARED_COLUMNS, ChannelKind, SecretRef
from lakeguard.records.alerts.channels.email import EmailChannel
from lakeguard.records.alerts.channels.slack import SlackChannel
from lakeguard.records.alerts.channels.webhook import WebhookChannel
from lakeguard.words.registries import refuse_incomplete, unregistered
from lakeguard.words.vocabulary import ChannelKindName

__all__ = [
    "CHANNEL_KINDS",
    "SHARED_COLUMNS",
    "ChannelKind",
    "EmailChannel",
    "NotificationChannel",
    "SecretRef",
    "SlackChannel",
    "WebhookChannel",
]

KINDS: tuple[type[ChannelKind], ...] = (WebhookChannel, SlackChannel, EmailChannel)
CHANNEL_KINDS: dict[str, type[ChannelKind]] = {k.NAME.value: k for k in KINDS}
refuse_incomplete(
    "notification channel kind",
    [f"module alerts/channels/{m}.py is not in KINDS" for m in unregistered(__path__, KINDS)]
    + [
        f"vocabulary.ChannelKindName.{n.name} has no kind"
        for n in ChannelKindName
        if n.value not in CHANNEL_KINDS
    ],
    "register each kind in lakeguard/records/alerts/channels/__init__.py KINDS",
)


def _kind_tag(value: Any) -> str | None:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return str(kind).upper() if kind is not None else None


if TYPE_CHECKING:
    NotificationChannel = ChannelKind
else:  # one model per registered kind, selected by `kind`
    NotificationChannel = Annotated[
        Union[tuple(Annotated[k, Tag(k.NAME.value.upper())] for k in KINDS)],  # noqa: UP007
        Discriminator(
            _kind_tag,
            custom_error_type="unknown_channel_kind",
            custom_error_message="unknown channel kind; channel kinds are "
            + ", ".join(CHANNEL_KINDS),
        ),
    ]
