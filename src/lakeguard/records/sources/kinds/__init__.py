"""Source kinds: one module each, registered here, the one list of them (pure).

Adding a kind is one module with its `SourceKind` (formats, load types, typed options,
credential, progress marks, checks), its entry in `KINDS` below, a member of
`vocabulary.SourceKindName`, and its engine half in `openlaketx.sources` (which refuses to load
without one). This registry refuses to load when a module or a vocabulary member is left out.
"""

from __future__ import annotations

from typing import Any

from lakeguard.records.sources.kinds.base import (
    ObjectFacts,
    ObjectOptions,
    SourceKind,
    SystemOptions,
    options_as,
    shared_problems,
)
from lakeguard.records.sources.kinds.delta import DeltaKind
from lakeguard.records.sources.kinds.file import FileKind
from lakeguard.records.sources.kinds.http import HttpKind
from lakeguard.records.sources.kinds.jdbc import JdbcKind
from lakeguard.records.sources.progress import ProgressMark
from lakeguard.words.registries import refuse_incomplete, unregistered
from lakeguard.words.vocabulary import SourceKindName

__all__ = [
    "DEFAULT_KIND",
    "SOURCE_KINDS",
    "ObjectFacts",
    "ObjectOptions",
    "SourceKind",
    "SystemOptions",
    "options_as",
    "shared_problems",
    "source_kind",
]

KINDS: tuple[SourceKind[Any, Any], ...] = (FileKind(), JdbcKind(), DeltaKind(), HttpKind())
SOURCE_KINDS: dict[str, SourceKind[Any, Any]] = {k.name.value: k for k in KINDS}
SOURCE_KIND_NAMES: tuple[str, ...] = tuple(SOURCE_KINDS)
# what a system that names no kind is
DEFAULT_KIND: str = KINDS[0].name.value
MARKS: dict[str, type[ProgressMark]] = {
    mark.KIND: mark for kind in KINDS for mark in kind.progress_marks()
}
refuse_incomplete(
    "source kind",
    [f"module sources/kinds/{m}.py is not in KINDS" for m in unregistered(__path__, KINDS)]
    + [
        f"vocabulary.SourceKindName.{n.name} has no kind"
        for n in SourceKindName
        if n.value not in SOURCE_KINDS
    ],
    "register each kind in lakeguard/records/sources/kinds/__init__.py KINDS",
)


def source_kind(name: str) -> SourceKind[Any, Any]:
    """The source kind called `name` (KeyError naming the known ones when there is none)."""
    try:
        return SOURCE_KINDS[name]
    except KeyError:
        raise KeyError(
            f"unknown source kind {name!r}; source kinds are {', '.join(SOURCE_KIND_NAMES)}"
        ) from None
