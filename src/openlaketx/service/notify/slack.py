"""Slack deliveries: an incoming webhook's payload in Block Kit (a header, the explain text,
the owner mentioned, a link to the dashboard), with `text` as the notification's fallback."""

from __future__ import annotations

from typing import ClassVar, Literal, TypedDict

from lakeguard.records.alerts.channels import SlackChannel
from lakeguard.records.reach import Reach
from lakeguard.words.vocabulary import ChannelKindName
from openlaketx.service.notify.base import Message, Sender, Sent, json_body, post

# Slack's limits: a header's text, a section's text
HEADER_LIMIT, SECTION_LIMIT = 150, 3000


# Block Kit's objects, as far as this payload uses them
class TextObject(TypedDict):
    type: Literal["plain_text", "mrkdwn"]
    text: str


class Button(TypedDict):
    type: Literal["button"]
    text: TextObject
    url: str


class HeaderBlock(TypedDict):
    type: Literal["header"]
    text: TextObject


class ContextBlock(TypedDict):
    type: Literal["context"]
    elements: list[TextObject]


class SectionBlock(TypedDict):
    type: Literal["section"]
    text: TextObject


class ActionsBlock(TypedDict):
    type: Literal["actions"]
    elements: list[Button]


Block = HeaderBlock | ContextBlock | SectionBlock | ActionsBlock


class SlackPayload(TypedDict):
    """An incoming webhook's payload: `text` is the notification's fallback."""

    text: str
    blocks: list[Block]


def blocks(channel: SlackChannel, message: Message) -> SlackPayload:
    """The incoming webhook's JSON payload."""
    owner = message.owner
    mention = channel.mentions.get(owner, f"@{owner}") if owner else None
    context = [f"*{message.event.cause}*", message.event.severity.value, message.event.subject]
    if mention:
        context.append(f"owner {mention}")
    body: list[Block] = [
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
