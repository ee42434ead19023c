"""Slack deliveries: an incoming webhook's payload in Block Kit (a header, the explain text,
the owner mentioned, a link to the dashboard), with `text` as the notification's fallback."""

from __future__ import annotations

from typing import ClassVar

from lakeguard.records.alerts.channels import SlackChannel
from lakeguard.records.reach import Reach
from lakeguard.words.shapes import JsonObject
from lakeguard.words.vocabulary import ChannelKindName
from openlaketx.service.notify.base import Message, Sender, Sent, json_body, post

# Slack's limits: a header's text, a section's text
HEADER_LIMIT, SECTION_LIMIT = 150, 3000


def blocks(channel: SlackChannel, message: Message) -> JsonObject:
    """The incoming webhook's JSON payload."""
    owner = message.owner
    mention = channel.mentions.get(owner, f"@{owner}") if owner else None
    context = [f"*{message.event.cause}*", message.event.severity.value, message.event.subject]
    if mention:
        context.append(f"owner {mention}")
    body: list[JsonObject] = [
        {"type": "header", "text": {"type": "plain_text", "text": message.headline[:HEADER_LIMIT]}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": " · ".join(context)}]},
        {
            "type": "section",
            "text": {
                "type": "mrkdwn",
                "text": f"```{message.event.explain[: SECTION_LIMIT - 6]}```",
            },
        },
    ]
    if message.link:
        body.append(
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "text": {"type": "plain_text", "text": "Open in the dashboard"},
                        "url": message.link,
                    }
                ],
            }
        )
    text = message.headline + (f" ({mention})" if mention else "")
    return {"text": text, "blocks": body}


class SlackSender(Sender[SlackChannel]):
    kind: ClassVar[ChannelKindName] = ChannelKindName.SLACK

    def send(self, channel: SlackChannel, message: Message, reach: Reach) -> Sent:
        url = self.secret(channel, "url_ref", channel.url_ref, reach)
        return post(
            reach,
            f"notification_channels[{channel.id}].url_ref ({channel.url_ref})",
            url,
            json_body(blocks(channel, message)),
            {"content-type": "application/json", "user-agent": "laketx-alerts"},
            channel.timeout_seconds,
        )
