"""The rows of what a batch is checked by: quality rules, policies, schema profiles."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.rows.schema import STAMPED, Comment, DefinitionTable


@dataclass(frozen=True, kw_only=True)
class QualityRuleRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="quality_rules",
        comment="What good data means: rules are data, not code (seed 002).",
        keys=("tenant_id", "rule_id"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    rule_id: str
    dataset_id: str
    layer: str
    rule_type: Annotated[str, Comment("NOT_NULL, RANGE, UNIQUE, REGEX, ALLOWED_VALUES, EXPRESSION")]
    rule_expression: Annotated[
        str, Comment("JSON of the rule parameters: columns, bounds, pattern, values")
    ]
    severity: Annotated[str, Comment("WARN / FAIL")]
    description: str | None = None
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None


@dataclass(frozen=True, kw_only=True)
class PolicyRuleRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="policy_rules",
        comment="Platform-level guarantees (seed 002).",
        keys=("tenant_id", "policy_id"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    policy_id: str
    applies_to_layer: Annotated[str, Comment("Layers it covers, comma-separated")]
    policy_type: Annotated[str, Comment("PII / SCHEMA / SLA / VOLUME")]
    policy_expression: str | None = None
    enforcement: Annotated[str, Comment("BLOCK / ALERT")]
    description: str | None = None
    parameters: Annotated[str | None, Comment("JSON object, e.g. VOLUME's window")] = None
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None


@dataclass(frozen=True, kw_only=True)
class SchemaRuleRow(DefinitionRow):
    TABLE: ClassVar[DefinitionTable] = DefinitionTable(
        name="schema_compatibility_rules",
        comment=(
            "Named profiles classifying schema differences: (profile, change_kind) -> ALLOW / "
            "WARN / BLOCK (seed 001)."
        ),
        keys=("tenant_id", "profile", "change_kind"),
    )
    tenant_id: Annotated[str | None, STAMPED] = None
    profile: str
    change_kind: Annotated[
        str,
        Comment(
            "column_added, column_removed, type_widened, type_changed, nullability_relaxed, ..."
        ),
    ]
    decision: Annotated[str, Comment("ALLOW / WARN / BLOCK")]
    description: str | None = None
    definition_hash: str | None = None
    active: Annotated[bool, STAMPED] = True
    created_at: Annotated[datetime | None, STAMPED] = None
    updated_at: Annotated[datetime | None, STAMPED] = None
