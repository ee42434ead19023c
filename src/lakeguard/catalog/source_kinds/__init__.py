"""Source kinds: one module each, registered here, the one list of them (pure).

Adding a kind is one module with its `SourceKind` (formats, default load type, what it allows,
its checks), its test, its entry in `KINDS` below, and its reader in
`openlaketx.sources.kinds` (which refuses to load without one).
"""

from __future__ import annotations

from lakeguard.catalog.source_kinds.base import SourceKind
from lakeguard.catalog.source_kinds.delta import DeltaKind
from lakeguard.catalog.source_kinds.file import FileKind
from lakeguard.catalog.source_kinds.jdbc import JdbcKind
from lakeguard.registries import refuse_incomplete, unregistered

__all__ = ["SOURCE_KINDS", "SourceKind", "source_kind"]

KINDS: tuple[SourceKind, ...] = (FileKind(), JdbcKind(), DeltaKind())
SOURCE_KINDS: dict[str, SourceKind] = {k.name: k for k in KINDS}
SOURCE_KIND_NAMES: tuple[str, ...] = tuple(SOURCE_KINDS)
refuse_incomplete(
    "source kind",
    [f"module source_kinds/{m}.py is not in KINDS" for m in unregistered(__path__, KINDS)],
    "register each kind in lakeguard/catalog/source_kinds/__init__.py KINDS",
)


def source_kind(name: str) -> SourceKind:
    """The source kind called `name` (KeyError naming the known ones when there is none)."""
    try:
        return SOURCE_KINDS[name]
    except KeyError:
        raise KeyError(
            f"unknown source kind {name!r}; source kinds are {', '.join(SOURCE_KIND_NAMES)}"
        ) from None
