"""A Slack channel: an incoming webhook, sent a Block Kit message that mentions the owner
(the sender is `openlaketx.service.notify.slack`)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from lakeguard.records.alerts.channels.base import ChannelKind, SecretRef
from lakeguard.words.vocabulary import ChannelKindName


class SlackChannel(ChannelKind):
    """Post to a Slack incoming webhook, whose URL (a credential: whoever has it may post)
    is held by reference. `mentions` maps a dataset's owner to whom the message mentions
    (`<@U024BE7LH>`, `<!subteam^S012AB3CD>`); an owner not listed is named in plain text."""

    NAME: ClassVar[ChannelKindName] = ChannelKindName.SLACK
    COLUMNS: ClassVar[dict[str, str]] = {"destination_ref": "url_ref"}

    kind: Literal["slack"]
    url_ref: SecretRef = Field(description="Where the incoming webhook's URL is")
    mentions: dict[str, str] = Field(
        default_factory=dict, description="owner -> Slack mention, e.g. <@U024BE7LH>"
    )
    timeout_seconds: float = Field(default=10.0, gt=0, le=120, description="Per attempt")

    def secret_refs(self) -> dict[str, str]:
        return {"url_ref": self.url_ref}

    def shown(self) -> str:
        return f"slack (url in {self.url_ref})"
