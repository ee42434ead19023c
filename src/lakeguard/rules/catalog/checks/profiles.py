"""Checks of the schema profiles: none named after a shipped one, every one used known."""

from __future__ import annotations

from lakeguard.records.schema.drift import SHIPPED_PROFILES
from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.words.problems import Problem


def check_profiles(doc: MetadataDocument) -> list[Problem]:
    """Schema profiles named after a shipped one, and unknown profiles in use."""
    known = set(SHIPPED_PROFILES) | {p.id for p in doc.schema_profiles}
    problems = [
        Problem(("schema_profiles", i, "id"), f"{p.id!r} is a shipped profile; name it otherwise")
        for i, p in enumerate(doc.schema_profiles)
        if p.id in SHIPPED_PROFILES
    ]
    named: list[tuple[str, int, str]] = [
        ("source_objects", i, o.schema_profile) for i, o in enumerate(doc.source_objects)
    ]
    named += [("datasets", i, d.schema_profile) for i, d in enumerate(doc.datasets)]
    for section, i, profile in named:
        if profile not in known:
            problems.append(
                Problem(
                    (section, i, "schema_profile"),
                    f"unknown schema profile {profile!r} (known: {', '.join(sorted(known))})",
                )
            )
    return problems
