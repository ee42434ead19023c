"""A webhook channel: a JSON POST signed as the Standard Webhooks spec says (the sender, its
headers and its retries are `openlaketx.service.notify.webhook`)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from lakeguard.records.alerts.channels.base import ChannelKind, SecretRef
from lakeguard.words.vocabulary import ChannelKindName


class WebhookChannel(ChannelKind):
    """POST the event as JSON to a URL held by reference, signed with `webhook-id`,
    `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256>` (Standard Webhooks),
    keyed by a `whsec_<base64>` secret held by reference."""

    NAME: ClassVar[ChannelKindName] = ChannelKindName.WEBHOOK
    COLUMNS: ClassVar[dict[str, str]] = {
        "destination_ref": "url_ref",
        "signing_secret_ref": "signing_secret_ref",
    }

    kind: Literal["webhook"]
    url_ref: SecretRef = Field(description="Where the URL (http or https) to POST to is")
    signing_secret_ref: SecretRef = Field(
        description="Where the signing secret is: whsec_ followed by base64 (Standard Webhooks)"
    )
    timeout_seconds: float = Field(default=10.0, gt=0, le=120, description="Per attempt")

    def secret_refs(self) -> dict[str, str]:
        return {"url_ref": self.url_ref, "signing_secret_ref": self.signing_secret_ref}

    def shown(self) -> str:
        return f"webhook (url in {self.url_ref})"
