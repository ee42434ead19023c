"""What a document names that its tenant may not reach (pure): paths, secrets, destinations.

Checked against the operator's `Reach` of the tenant wherever definitions arrive (validate,
plan, apply, a watched folder) and again on the stored rows each time a run loads them (a
direct SQL edit, a row written before the tenant was confined). Each problem is where the
field is written and says what the tenant may use instead.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lakeguard.records.reach import Reach
from lakeguard.records.sources.kinds import source_kind
from lakeguard.records.sources.kinds.base import SystemOptions
from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.words.problems import Problem


def secret_problems(reach: Reach, ref: str | None, loc: tuple[Any, ...]) -> list[Problem]:
    """A secret reference outside the tenant's scope (a file's symlinks resolved)."""
    if ref is None:
        return []
    resolved = os.path.realpath(reach.secret_file(ref)) if ref.startswith("file:") else None
    why = reach.secret_refusal(ref, resolved=resolved)
    return [Problem(loc, f"{why}; {reach.secret_fix()}")] if why else []


def check_reach(doc: MetadataDocument, reach: Reach, base_dir: Path | None = None) -> list[Problem]:
    """Every field of `doc` that names what `reach` does not allow (relative roots taken from
    `base_dir`, as apply stores them)."""
    problems: list[Problem] = []
    systems: dict[str, SystemOptions] = {}
    for i, system in enumerate(doc.source_systems):
        loc = ("source_systems", i)
        options = system.options.resolved(base_dir)
        systems[system.id] = options
        kind = system.source_kind
        problems += kind.system_reach(options, reach, loc)
        problems += secret_problems(reach, system.credential_ref, (*loc, "credential_ref"))
    kinds = {s.id: s.kind for s in doc.source_systems}
    for j, obj in enumerate(doc.source_objects):
        if obj.system not in systems:
            continue  # an unknown system: the references say so
        kind = source_kind(kinds[obj.system])
        try:
            options = obj.kind_options(kind.name)
        except ValueError:
            continue  # the kind's checks say why
        problems += kind.object_reach(
            systems[obj.system], options, obj.locator, obj.options, reach, ("source_objects", j)
        )
    for k, job in enumerate(doc.jobs):
        problems += secret_problems(
            reach, job.webhook_secret_ref, ("jobs", k, "webhook_secret_ref")
        )
    for n, channel in enumerate(doc.notification_channels):
        loc = ("notification_channels", n)
        for name, ref in channel.secret_refs().items():
            problems += secret_problems(reach, ref, (*loc, name))
        problems += channel.reach_problems(reach, loc)
    return problems
