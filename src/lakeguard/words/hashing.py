"""The one home of canonical JSON and fingerprints (truncated sha256), pure."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def to_json(value: Any) -> str:
    """Canonical JSON text (stable key order), as the JSON-in-STRING columns store it."""
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))


def digest(text: str, length: int = 32) -> str:
    """Hex sha256 of `text`, truncated to `length` characters."""
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def fingerprint(value: Any, length: int = 32) -> str:
    """`digest` of the canonical JSON of `value` (stable key order)."""
    return digest(to_json(value), length)
