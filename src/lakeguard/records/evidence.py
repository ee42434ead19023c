"""What a gate decision rests on, as a frozen typed record (pure).

`promotion_status.evidence` stores it as JSON in the shape decisions have always had: rule
outcomes by id, check results and details by name, the rules whose failing rows were dropped,
the fail behaviour, the upstream versions used, the batch judged and what it read piece by
piece (`read`); plus `check_kinds`, each check's kind, and `check_blocking`, whether failing
it blocked (a policy's enforcement). Renderers, `explain`, replay and stuck detection read
the record by field, never by key or by parsing the reason text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, NotRequired

# typing_extensions': pydantic (the API's models) validates only its TypedDict before 3.12
from typing_extensions import TypedDict

from lakeguard.words.vocabulary import Outcome


class CheckKind(StrEnum):
    """What a check of a decision is about (everything other than a quality rule)."""

    POLICY = "policy"  # a policy of the layer (PII, SCHEMA, SLA, VOLUME, PROFILE)
    SCHEMA = "schema"  # a schema change, decided by the profile
    CHANGED_FILES = "changed_files"  # files ingested before came back changed
    EMPTY_SNAPSHOT = "empty_snapshot"  # a full snapshot with no rows
    NOTHING_LEFT = "nothing_left"  # dropping failing rows would leave none
    REJECTED_FILES = "rejected_files"  # files put aside as unreadable, the rest judged
    OTHER = "other"


class CheckResult(StrEnum):
    PASS = "PASS"
    BLOCK = "BLOCK"  # failed and blocking
    ALERT = "ALERT"  # failed, logged only


@dataclass(frozen=True)
class Check:
    """A non-rule condition of the decision, as the engine found it."""

    name: str
    passed: bool
    blocking: bool
    detail: str
    kind: CheckKind = CheckKind.OTHER

    @property
    def result(self) -> CheckResult:
        if self.passed:
            return CheckResult.PASS
        return CheckResult.BLOCK if self.blocking else CheckResult.ALERT


@dataclass(frozen=True, kw_only=True)
class CheckRecord:
    """A check as the decision recorded it; `blocking`: whether failing it blocked then (a
    policy's enforcement, BLOCK or ALERT), None where an older decision did not say."""

    name: str
    kind: CheckKind
    result: CheckResult
    detail: str
    blocking: bool | None = None


class EvidenceJson(TypedDict):
    """Evidence as `promotion_status.evidence` stores it (the module docstring); the keys
    that are not always there are left out rather than null, as decisions have always been."""

    rules: dict[str, str]
    checks: dict[str, str]
    check_details: dict[str, str]
    check_kinds: dict[str, str]
    check_blocking: dict[str, bool]
    dropped_rules: list[str]
    fail_behavior: NotRequired[str]
    dropped_rows: NotRequired[int]
    upstream: NotRequired[dict[str, int]]
    input: NotRequired[str]
    read: NotRequired[list[str]]


@dataclass(frozen=True, kw_only=True)
class Evidence:
    rules: Mapping[str, Outcome] = field(default_factory=dict)  # rule id -> outcome
    checks: tuple[CheckRecord, ...] = ()
    dropped_rules: tuple[str, ...] = ()  # FAIL rules whose failing rows were set aside
    fail_behavior: str | None = None
    dropped_rows: int | None = None
    upstream: Mapping[str, int] = field(default_factory=dict)  # parent -> version used
    input: str | None = None  # the batch's fingerprint (what a stuck dataset reads again)
    # what the batch read, piece by piece (lakeguard.records.quarantine: a later batch that read
    # every piece of a held one holds it again, or promotes it)
    read: tuple[str, ...] = ()

    def check(self, name: str) -> CheckRecord | None:
        return next((c for c in self.checks if c.name == name), None)

    def blocked_by(self) -> tuple[CheckRecord, ...]:
        return tuple(c for c in self.checks if c.result == CheckResult.BLOCK)

    def about_batch(
        self,
        *,
        fail_behavior: str,
        upstream: Mapping[str, int],
        batch: str,
        dropped_rows: int | None = None,
        read: tuple[str, ...] = (),
    ) -> Evidence:
        """The same evidence with what the engine knows about the batch it judged."""
        return replace(
            self,
            fail_behavior=fail_behavior,
            upstream=dict(upstream),
            input=batch,
            dropped_rows=dropped_rows,
            read=read,
        )

    def to_json(self) -> EvidenceJson:
        """The persisted shape (see the module docstring)."""
        shape: EvidenceJson = {
            "rules": {k: str(v) for k, v in self.rules.items()},
            "checks": {c.name: str(c.result) for c in self.checks},
            "check_details": {c.name: c.detail for c in self.checks},
            "check_kinds": {c.name: str(c.kind) for c in self.checks},
            "check_blocking": {c.name: c.blocking for c in self.checks if c.blocking is not None},
            "dropped_rules": list(self.dropped_rules),
        }
        if self.fail_behavior is not None:
            shape["fail_behavior"] = self.fail_behavior
        if self.dropped_rows is not None:
            shape["dropped_rows"] = self.dropped_rows
        if self.upstream or self.input is not None:
            shape["upstream"] = dict(self.upstream)
        if self.input is not None:
            shape["input"] = self.input
        if self.read:
            shape["read"] = list(self.read)
        return shape

    @classmethod
    def from_json(cls, value: str | Mapping[str, Any] | None) -> Evidence:
        """The record from its stored JSON (text or parsed); empty when there is none."""
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                value = None
        if not isinstance(value, Mapping):
            return cls()
        results = dict(value.get("checks") or {})
        details = dict(value.get("check_details") or {})
        kinds = dict(value.get("check_kinds") or {})
        blocking = dict(value.get("check_blocking") or {})
        return cls(
            rules={str(k): Outcome(v) for k, v in (value.get("rules") or {}).items()},
            checks=tuple(
                CheckRecord(
                    name=name,
                    kind=CheckKind(kinds[name]) if name in kinds else _legacy_kind(name),
                    result=CheckResult(result),
                    detail=str(details.get(name, "")),
                    blocking=_blocking(blocking.get(name), CheckResult(result)),
                )
                for name, result in results.items()
            ),
            dropped_rules=tuple(value.get("dropped_rules") or ()),
            fail_behavior=value.get("fail_behavior"),
            dropped_rows=value.get("dropped_rows"),
            upstream={str(k): int(v) for k, v in (value.get("upstream") or {}).items()},
            input=value.get("input"),
            read=tuple(str(p) for p in value.get("read") or ()),
        )


def _legacy_kind(name: str) -> CheckKind:
    """A check's kind in a decision recorded before kinds were stored (their names began
    with it); the one place a name is read for its kind."""
    head = name.split(":", 1)[0]
    return CheckKind(head) if head in set(CheckKind) else CheckKind.OTHER


def _blocking(recorded: object, result: CheckResult) -> bool | None:
    """Whether a check blocked when failing, as recorded, or as its result says in a decision
    recorded before it was kept (a passed check's, then, is not known)."""
    if isinstance(recorded, bool):
        return recorded
    return {CheckResult.BLOCK: True, CheckResult.ALERT: False}.get(result)
