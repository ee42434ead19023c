"""An email channel: SMTP, upgraded with STARTTLS, plain text and HTML (the sender is
`openlaketx.service.notify.email`)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from lakeguard.records.alerts.channels.base import ChannelKind, SecretRef
from lakeguard.records.reach import Reach
from lakeguard.words.problems import Problem
from lakeguard.words.vocabulary import ChannelKindName

Address = Annotated[str, Field(pattern=r"^[^@\s<>,;]+@[^@\s<>,;]+\.[^@\s<>,;]+$")]
HostName = Annotated[str, Field(pattern=r"^[A-Za-z0-9.\-]+$|^\[[0-9A-Fa-f:.]+\]$")]


class EmailChannel(ChannelKind):
    """Mail the event to `to` (plain addresses: recipients are not secrets) through an SMTP
    server, upgraded with STARTTLS unless `starttls: false` (a relay on this host, say), and
    authenticated with `username` and the password held by `password_ref` when given."""

    NAME: ClassVar[ChannelKindName] = ChannelKindName.EMAIL
    COLUMNS: ClassVar[dict[str, str]] = {"recipients": "to"}

    kind: Literal["email"]
    to: list[Address] = Field(min_length=1, description="Recipients' addresses")
    sender: Address = Field(description="The From address")
    smtp_host: HostName
    smtp_port: int = Field(default=587, ge=1, le=65535)
    starttls: bool = Field(
        default=True, description="Upgrade the connection with STARTTLS (refuse if offered none)"
    )
    username: str | None = None
    password_ref: SecretRef | None = Field(default=None, description="Where the password is")
    timeout_seconds: float = Field(default=30.0, gt=0, le=300, description="Per attempt")

    @model_validator(mode="after")
    def _credentials(self) -> EmailChannel:
        if (self.username is None) != (self.password_ref is None):
            raise ValueError("give both username and password_ref, or neither")
        if self.password_ref is not None and not self.starttls:
            raise ValueError("a password is sent over STARTTLS only: remove starttls: false")
        return self

    def secret_refs(self) -> dict[str, str]:
        return {"password_ref": self.password_ref} if self.password_ref else {}

    def reach_problems(self, reach: Reach, loc: tuple[Any, ...]) -> list[Problem]:
        host = self.smtp_host.strip("[]")
        why = reach.name_refusal(host, self.smtp_port)
        return [Problem((*loc, "smtp_host"), f"{why}; {reach.network_fix()}")] if why else []

    def shown(self) -> str:
        return f"email to {', '.join(self.to)} via {self.smtp_host}:{self.smtp_port}"
