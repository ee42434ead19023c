"""The rows of the API keys (a hash only, never a key)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.rows.schema import STAMPED, Comment, DefinitionTable


@dataclass(frozen=True, kw_only=True)
class ApiKeyRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="api_keys",
        comment="API keys per tenant; only a hash is ever stored (seed 003).",
        keys=("tenant_id", "api_key_id"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    api_key_id: str
    api_key_hash: str
    created_by: str | None = None
    expires_at: datetime | None = None
    is_active: bool
    last_used_at: datetime | None = None
    description: str | None = None
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None
    scopes: Annotated[
        list[str] | None,
        Comment("What the key may do: runs:trigger, runs:read, keys:admin, definitions:write"),
    ] = None
    revoked_at: Annotated[
        datetime | None, Comment("When the key was revoked (it stops at once)")
    ] = None
