"""The senders of notification channels: one module per channel kind, registered here.

Each `lakeguard.records.alerts.channels` kind has its sender (`webhook.py`, `slack.py`, `email.py`,
over `base.py`); the registry refuses to load when a module or a kind is left out. The
dispatcher (`openlaketx.service.dispatcher`) hands each claimed delivery to its kind's sender.
"""

from __future__ import annotations

from typing import Any

from lakeguard.records.alerts.channels import CHANNEL_KINDS
from lakeguard.words.registries import refuse_incomplete, unregistered
from openlaketx.service.notify.base import Message, Sender, Sent
from openlaketx.service.notify.email import EmailSender
from openlaketx.service.notify.slack import SlackSender
from openlaketx.service.notify.webhook import WebhookSender

__all__ = ["SENDERS", "Message", "Sender", "Sent"]

KINDS: tuple[Sender[Any], ...] = (WebhookSender(), SlackSender(), EmailSender())
SENDERS: dict[str, Sender[Any]] = {s.kind.value: s for s in KINDS}
refuse_incomplete(
    "notification sender",
    [f"module service/notify/{m}.py is not in KINDS" for m in unregistered(__path__, KINDS)]
    + [f"channel kind {k} has no sender" for k in CHANNEL_KINDS if k not in SENDERS],
    "register each sender in openlaketx/service/notify/__init__.py KINDS",
)
