"""Whether a stored definition row already says what an incoming one says (pure).

Compared by content, never by the stored `definition_hash` alone: a direct SQL edit of a
definition table changes fields without recomputing the hash, and a soft delete flips `active`.
Applying a document must see both, so it puts back what the document says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lakeguard.words.hashing import digest, to_json

# Written by the store itself, not part of what a definition says.
BOOKKEEPING = frozenset({"tenant_id", "created_at", "updated_at", "definition_hash", "active"})


def _plain(value: Any) -> Any:
    """One spelling per value: lists for tuples, ints for integral floats (a double column
    reads back 0.0 where a document said 0)."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def content(row: Mapping[str, Any], fields: list[str]) -> str:
    """The canonical text of `fields` of `row` (a missing field reads as null)."""
    return to_json({k: _plain(row.get(k)) for k in fields})


def same_definition(stored: Mapping[str, Any] | None, incoming: Mapping[str, Any]) -> bool:
    """True when `stored` exists, is as active as `incoming` (active unless it says otherwise)
    and holds every field of `incoming` with the same value."""
    if stored is None or bool(stored.get("active", True)) != bool(incoming.get("active", True)):
        return False
    fields = sorted(k for k in incoming if k not in BOOKKEEPING)
    return content(stored, fields) == content(incoming, fields)


def content_hash(row: Mapping[str, Any]) -> str:
    """A fingerprint of what a stored definition row says, its bookkeeping aside (a null
    column says nothing: a column added later leaves it as it was). Unlike the stored
    `definition_hash` (what the last apply wrote), a direct edit changes it."""
    said = sorted(k for k, v in row.items() if k not in BOOKKEEPING and v is not None)
    return digest(content(row, said))
