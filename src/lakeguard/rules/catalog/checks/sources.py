"""Checks of the source systems and objects: their system and dataset exist, and each is
checked by its kind (shared checks, typed options, the kind's own)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import ValidationError as PydanticError

from lakeguard.records.sources.kinds import ObjectFacts, SourceKind, shared_problems, source_kind
from lakeguard.rules.catalog.models import MetadataDocument, SourceObject
from lakeguard.words.problems import Problem


def _check_systems(doc: MetadataDocument) -> list[Problem]:
    problems: list[Problem] = []
    for i, sys in enumerate(doc.source_systems):
        loc = ("source_systems", i)
        problems += sys.source_kind.check_system(sys.options, sys.credential_ref, loc)
    return problems


def _kind_option_problems(
    obj: SourceObject, kind: SourceKind[Any, Any], loc: tuple[Any, ...]
) -> list[Problem]:
    """The object's options checked against its kind's typed model, each where it is written."""
    foreign = sorted(set(obj.written_kind_fields()) - set(kind.object_options.model_fields))
    if foreign:
        own = ", ".join(kind.object_options.model_fields) or "none"
        return [
            Problem((*loc, name), f"not an option of {kind.name} sources (theirs: {own})")
            for name in foreign
        ]
    try:
        obj.kind_options(kind.name)
    except PydanticError as exc:
        return [Problem((*loc, *err["loc"]), err["msg"]) for err in exc.errors()]
    return []


def _check_source_object(
    obj: SourceObject,
    kind: SourceKind[Any, Any],
    loc: tuple[Any, ...],
    siblings: int,
) -> list[Problem]:
    """What every kind checks alike (formats, load types, watermarks, paths), the object's
    options against its kind's model, then the kind's own checks."""
    fmt, load = obj.kind_defaults(kind.name)
    facts = ObjectFacts(
        locator=obj.locator,
        format=fmt,
        load_type=load,
        columns={c.name: c.type for c in obj.columns},
        watermark_column=obj.watermark_column,
        siblings=siblings,
    )
    problems = shared_problems(kind, facts, obj.lookback, loc)
    option_problems = _kind_option_problems(obj, kind, loc)
    if option_problems:
        return problems + option_problems
    return problems + kind.check_object(obj.kind_options(kind.name), facts, loc)


def check_sources(doc: MetadataDocument) -> list[Problem]:
    """Each source system's and source object's problems."""
    problems: list[Problem] = _check_systems(doc)
    systems = {s.id: s.kind for s in doc.source_systems}
    datasets = {d.id for d in doc.datasets}
    per_dataset = Counter(o.dataset for o in doc.source_objects)
    for i, obj in enumerate(doc.source_objects):
        loc: tuple[Any, ...] = ("source_objects", i)
        if obj.system not in systems:
            problems.append(Problem((*loc, "system"), f"unknown system {obj.system!r}"))
            continue
        if obj.dataset not in datasets:
            problems.append(Problem((*loc, "dataset"), f"unknown dataset {obj.dataset!r}"))
        problems += _check_source_object(
            obj, source_kind(systems[obj.system]), loc, per_dataset[obj.dataset]
        )
    return problems
