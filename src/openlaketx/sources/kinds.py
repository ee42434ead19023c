"""The engine half of every source kind, found from one registry.

The kinds themselves (formats, options, credential, progress, checks) are LakeGuard's
(`lakeguard.records.sources.kinds`); each has one `SourceEngine` here that reads it. The registry
refuses to load when a kind has no engine, so a new kind cannot be half added.
"""

from __future__ import annotations

from lakeguard.records.sources.kinds import SOURCE_KIND_NAMES
from openlaketx.sources.base import SourceEngine
from openlaketx.sources.delta import DeltaSource
from openlaketx.sources.files import FileSource
from openlaketx.sources.http import HttpSource
from openlaketx.sources.jdbc import JdbcSource

ENGINES: dict[str, SourceEngine] = {
    e.kind.value: e for e in (FileSource(), JdbcSource(), DeltaSource(), HttpSource())
}

_missing = sorted(set(SOURCE_KIND_NAMES) ^ set(ENGINES))
if _missing:
    raise RuntimeError(
        f"source kinds and engines differ on {', '.join(_missing)}: every kind of "
        "lakeguard.records.sources.kinds needs its SourceEngine in openlaketx/sources/kinds.py"
    )


def engine(kind: str) -> SourceEngine:
    """The engine that reads sources of `kind`."""
    return ENGINES[kind]
