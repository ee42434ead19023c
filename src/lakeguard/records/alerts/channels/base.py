"""What every notification channel kind is (pure): a typed document entry whose `kind`
selects its class, the secret references it holds, and how it is stored.

A channel's destination is a secret where it is a credential: a webhook or Slack URL is held
by reference (`url_ref`: an environment variable or a file), never in metadata, since whoever
has a Slack incoming-webhook URL may post to it and receivers often put a token in the path.
An email channel's recipients are plain addresses (not secrets); its SMTP password is a
reference. Every reference is checked against the tenant's reach like a `credential_ref`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import Field, JsonValue

from lakeguard.records.alerts.channel_rows import ChannelRow
from lakeguard.records.reach import Reach
from lakeguard.words.fields import Identifier, Strict
from lakeguard.words.hashing import to_json
from lakeguard.words.problems import Problem
from lakeguard.words.vocabulary import ChannelKindName

SecretRef = Annotated[
    str,
    Field(
        pattern=r"^(env:)?[A-Za-z_][A-Za-z0-9_]*$|^file:.+$",
        description="Where the secret is: an environment variable (NAME or env:NAME) or a "
        "file (file:/path); the secret itself is never stored",
    ),
]
# The stored columns every kind shares (the rest of its fields are `options`, JSON).
SHARED_COLUMNS = ("destination_ref", "recipients", "signing_secret_ref")
# Fields every channel has, which are not options of its kind.
COMMON_FIELDS = ("id", "kind", "description", "enabled")


class ChannelKind(Strict):
    """A notification channel of one kind: a subclass declares `kind` as a Literal of its
    name, its fields, and which of them fill the shared columns."""

    NAME: ClassVar[ChannelKindName]
    # shared column -> the field of this kind it holds
    COLUMNS: ClassVar[dict[str, str]] = {}

    id: Identifier
    kind: str
    description: str | None = None
    enabled: bool = Field(default=ChannelRow.enabled, description="false: nothing is sent to it")

    def secret_refs(self) -> dict[str, str]:
        """Field name -> secret reference, for every reference this channel holds."""
        return {}

    def reach_problems(self, reach: Reach, loc: tuple[Any, ...]) -> list[Problem]:
        """What this channel names that the tenant may not reach, besides its secrets (a
        destination written in plain, such as an SMTP host)."""
        return []

    def shown(self) -> str:
        """Where it sends, in words that name no secret (for lists and the dashboard)."""
        return self.kind

    # -- storage --------------------------------------------------------------------------
    def row(self) -> ChannelRow:
        """The channel's row in `notification_channels` (its hash not yet given)."""
        values = self.model_dump(mode="json")
        held = set(COMMON_FIELDS) | set(self.COLUMNS.values())
        row = ChannelRow(
            channel_id=self.id,
            kind=self.kind,
            description=self.description,
            enabled=self.enabled,
            options=to_json({k: v for k, v in values.items() if k not in held}),
        )
        return row.replaced(**{column: values.get(name) for column, name in self.COLUMNS.items()})

    @classmethod
    def entry(cls, row: ChannelRow, options: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
        """The document entry a stored row (its options parsed) says."""
        entry: dict[str, JsonValue] = {
            "id": row.channel_id,
            "kind": row.kind,
            "description": row.description,
            "enabled": row.enabled,
        }
        for column, name in cls.COLUMNS.items():
            value = getattr(row, column)
            entry[name] = list(value) if isinstance(value, list | tuple) else value
        return {**entry, **options}
