"""Webhook deliveries, signed as the Standard Webhooks spec says (standardwebhooks.com):

    webhook-id: <the delivery's id, the same on every attempt>
    webhook-timestamp: <Unix seconds of this attempt>
    webhook-signature: v1,<base64 of HMAC-SHA256 over "{id}.{timestamp}.{body}">

keyed by the secret `whsec_<base64>` (the key is the base64-decoded part). A receiver checks
the signature and the timestamp's age, and deduplicates by `webhook-id`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from typing import ClassVar

from lakeguard.records.alerts.channels import WebhookChannel
from lakeguard.records.reach import Reach
from lakeguard.words.errors import ConfigError
from lakeguard.words.vocabulary import ChannelKindName
from openlaketx.service.notify.base import Message, Sender, Sent, json_body, post

PREFIX = "whsec_"


def signing_key(secret: str, where: str) -> bytes:
    """The HMAC key of a `whsec_<base64>` secret (a ConfigError naming `where` otherwise)."""
    if not secret.startswith(PREFIX):
        raise ConfigError(
            "a webhook signing secret starts with whsec_ followed by base64",
            where=where,
            fix="generate one: python -c \"import base64,os; print('whsec_' + "
            'base64.b64encode(os.urandom(32)).decode())"',
        )
    try:
        return base64.b64decode(secret[len(PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(
            "the webhook signing secret after whsec_ is not base64", where=where
        ) from None


def sign(key: bytes, delivery_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` value for one attempt."""
    signed = f"{delivery_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


class WebhookSender(Sender[WebhookChannel]):
    kind: ClassVar[ChannelKindName] = ChannelKindName.WEBHOOK

    def send(self, channel: WebhookChannel, message: Message, reach: Reach) -> Sent:
        where = f"notification_channels[{channel.id}]"
        url = self.secret(channel, "url_ref", channel.url_ref, reach)
        secret = self.secret(channel, "signing_secret_ref", channel.signing_secret_ref, reach)
        key = signing_key(secret, f"{where}.signing_secret_ref")
        timestamp = int(time.time())
        body = json_body(
            {
                "type": message.kind,
                "timestamp": message.event.recorded_at.isoformat() + "Z",
                "data": message.data(),
            }
        )
        headers = {
            "content-type": "application/json",
            "user-agent": "laketx-webhooks",
            "webhook-id": message.delivery_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(key, message.delivery_id, timestamp, body),
        }
        return post(
            reach,
            f"{where}.url_ref ({channel.url_ref})",
            url,
            body,
            headers,
            channel.timeout_seconds,
            secrets=(secret,),
        )
