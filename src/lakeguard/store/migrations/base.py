"""What a migration is (its number, its name, why, and what it does)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    why: str
    apply: Callable[[MetadataStore], list[str]]  # idempotent; returns what it changed
