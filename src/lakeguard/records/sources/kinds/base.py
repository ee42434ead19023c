"""What a source kind declares (pure): everything LakeGuard and the engine need to know of it.

A source kind is one class in one module of this package, registered in its `__init__.py`:
- its name (a member of `vocabulary.SourceKindName`), the formats it reads and the load types
  it supports (the first of each is the default);
- its options, as two typed models: the system's (`system_options`, the document's
  `source_systems[].options`) and a source object's (`object_options`, written flat on the
  object and stored in `source_objects.ingest_options`);
- its credential by reference (`credential`: what `credential_ref` holds for it, or None when
  it takes none), never the secret;
- its progress: the marks a batch records of what it took (`marks`, see
  `lakeguard.records.sources.progress`), so a crash neither loses nor repeats input;
- its checks beyond the options' own validation (`check_system`, `check_object`);
- what its options reach (`system_reach`, `object_reach`: paths, destinations, anything a
  tenant must not name), against the tenant's `lakeguard.records.reach.Reach`.
How the engine reads it, answers "anything new?" without a JVM, lists arrivals for the
scheduler and classifies failures is the kind's engine half, `openlaketx.sources`, registered
there once per kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict

from lakeguard.records.reach import Reach, resolved_refusal
from lakeguard.records.schema.types import is_nested, is_watermark_type
from lakeguard.records.sources.progress import ProgressMark, WatermarkMark
from lakeguard.words.problems import Problem
from lakeguard.words.vocabulary import SourceKindName, SourceLoad


class SystemOptions(BaseModel):
    """A source system's options: unknown ones are errors, and none holds a secret."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def resolved(self, base_dir: Path | None) -> Self:
        """The options with paths made absolute against the document's folder."""
        return self

    def reach_problems(self, reach: Reach, loc: tuple[Any, ...]) -> list[Problem]:
        """What these options name that the tenant may not reach (`loc`: the system's)."""
        return []


class RootOptions(SystemOptions):
    """Options of a system that is a folder (files, Delta tables)."""

    root: str | None = None

    def resolved(self, base_dir: Path | None) -> Self:
        root = self.root
        if root is None or base_dir is None or "://" in root or Path(root).is_absolute():
            return self
        return self.model_copy(update={"root": str((base_dir / root).resolve())})

    def path_of(self, locator: str) -> str:
        """Where a locator is: under the root, or the locator itself when there is none."""
        if self.root is None:
            return locator
        return f"{self.root.rstrip('/')}/{locator.lstrip('/')}"

    def reach_problems(self, reach: Reach, loc: tuple[Any, ...]) -> list[Problem]:
        """The root outside what the tenant may read."""
        if self.root is None:
            return []
        return storage_problems(reach, self.root, (*loc, "options", "root"), opened=False)


class ObjectOptions(BaseModel):
    """A source object's options of its kind (written flat on the object in a document)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# What a file that cannot be read (corrupt, truncated, not the declared format) does to its
# batch: put aside in `rejected_files` while the rest is judged as usual, or fail the batch.
OnBadFile = Literal["reject", "block"]
ON_BAD_FILE = (
    "A file that cannot be read (corrupt, truncated, not the declared format): reject (put it "
    "aside in rejected_files, load the rest) or block (the whole delivery fails, naming it)"
)


class NoObjectOptions(ObjectOptions):
    """A kind whose source objects take no options of their own."""


@dataclass(frozen=True)
class ObjectFacts:
    """What a kind's checks need of a source object beyond its own options."""

    locator: str
    format: str
    load_type: SourceLoad
    columns: Mapping[str, str]  # declared name -> type
    watermark_column: str | None
    siblings: int  # source objects landing in the same dataset, itself included


SysO = TypeVar("SysO", bound=SystemOptions)
ObjO = TypeVar("ObjO", bound=ObjectOptions)


class SourceKind(Generic[SysO, ObjO]):
    """A kind of source system: files, a JDBC database, Delta tables, an HTTP API."""

    name: ClassVar[SourceKindName]
    formats: ClassVar[tuple[str, ...]]  # the first is the default
    loads: ClassVar[tuple[SourceLoad, ...]]  # the first is the default
    system_options: type[SysO]
    object_options: type[ObjO]
    # what credential_ref holds for this kind; None: its engine reads none
    credential: ClassVar[str | None] = None
    marks: ClassVar[tuple[type[ProgressMark], ...]] = ()
    # incremental reads above a watermark column (watermark_column, lookback)
    watermarks: ClassVar[bool] = False

    @property
    def default_load(self) -> SourceLoad:
        return self.loads[0]

    def progress_marks(self) -> tuple[type[ProgressMark], ...]:
        """Every mark a batch of this kind may record."""
        return (*self.marks, WatermarkMark) if self.watermarks else self.marks

    def system(self, raw: Mapping[str, Any]) -> SysO:
        """The system options, parsed (pydantic's ValidationError when they do not parse)."""
        return self.system_options.model_validate(dict(raw))

    def object(self, raw: Mapping[str, Any]) -> ObjO:
        """A stored object's options of this kind; keys of other kinds are left aside."""
        known = self.object_options.model_fields
        return self.object_options.model_validate({k: v for k, v in raw.items() if k in known})

    def check_system(
        self, options: SysO, credential_ref: str | None, loc: tuple[Any, ...]
    ) -> list[Problem]:
        """Problems of a system of this kind beyond its options' own validation."""
        return []

    def check_object(
        self, options: ObjO, facts: ObjectFacts, loc: tuple[Any, ...]
    ) -> list[Problem]:
        """Problems of a source object of this kind beyond its options' own validation."""
        return []

    def system_reach(self, options: SysO, reach: Reach, loc: tuple[Any, ...]) -> list[Problem]:
        """What a system's options name that the tenant may not reach (paths, destinations,
        options that open files or load code); `loc` is the system's. By default what the
        options say of themselves (a folder system: its root)."""
        return options.reach_problems(reach, loc)

    def object_reach(
        self,
        system: SysO,
        options: ObjO,
        locator: str,
        read_options: Mapping[str, str],
        reach: Reach,
        loc: tuple[Any, ...],
    ) -> list[Problem]:
        """What a source object names that the tenant may not reach; `loc` is the object's."""
        return []


Model = TypeVar("Model", bound=BaseModel)


def options_as(options: BaseModel, model: type[Model]) -> Model:
    """`options` as the model a kind declared (an engine half asking for its own kind's)."""
    if not isinstance(options, model):
        raise TypeError(f"expected {model.__name__}, got {type(options).__name__}")
    return options


def shared_problems(
    kind: SourceKind[Any, Any],
    facts: ObjectFacts,
    lookback: float | str | None,
    loc: tuple[Any, ...],
) -> list[Problem]:
    """What every kind checks alike: its formats and load types, watermarks, paths."""
    problems: list[Problem] = []
    if facts.format not in kind.formats:
        problems.append(
            Problem(
                (*loc, "format"),
                f"a {kind.name} system reads {', '.join(kind.formats)}, not {facts.format}",
            )
        )
    if facts.load_type not in kind.loads:
        problems.append(
            Problem(
                (*loc, "load_type"),
                f"{kind.name} sources are read {' or '.join(kind.loads)}, not {facts.load_type}",
            )
        )
    problems += _nested_problems(kind, facts, loc)
    incremental = facts.load_type == SourceLoad.INCREMENTAL
    if not kind.watermarks or not incremental:
        if facts.watermark_column is not None:
            problems.append(
                Problem(
                    (*loc, "watermark_column"),
                    "a watermark is read by incremental sources of a kind that has one "
                    f"(not {kind.name} sources read {facts.load_type})",
                )
            )
        if lookback is not None:
            problems.append(
                Problem((*loc, "lookback"), "a lookback is for sources read above a watermark")
            )
        return problems + _path_problems(facts, loc)
    problems += _watermark_problems(facts, lookback, loc)
    if facts.siblings > 1:
        problems.append(
            Problem(loc, "an incremental source must be the only source object of its dataset")
        )
    return problems + _path_problems(facts, loc)


def _nested_problems(
    kind: SourceKind[Any, Any], facts: ObjectFacts, loc: tuple[Any, ...]
) -> list[Problem]:
    """Nested column types where the format has none to read: only JSON documents (files and
    http records) carry arrays, maps and structs here."""
    if facts.format == "json":
        return []
    return [
        Problem(
            (*loc, "columns", i, "type"),
            f"{name} is {data_type}: nested types (array, map, struct) are read from JSON "
            f"sources only (format json, a file or http records), not {facts.format}; "
            "declare the column as a scalar type such as string",
        )
        for i, (name, data_type) in enumerate(facts.columns.items())
        if is_nested(data_type)
    ]


def storage_problems(
    reach: Reach,
    location: str,
    loc: tuple[Any, ...],
    *,
    write: bool = False,
    opened: bool = True,
) -> list[Problem]:
    """`location` (a folder, a glob or a URI; symlinks resolved) outside what the tenant may
    read (or write)."""
    why = resolved_refusal(reach, location, write=write, opened=opened)
    return [Problem(loc, f"{why}; {reach.storage_fix(write=write)}")] if why else []


def path_option_problems(
    read_options: Mapping[str, str], reach: Reach, loc: tuple[Any, ...]
) -> list[Problem]:
    """Reader options that name a file or a folder of their own (Spark's `path`, `basePath`,
    XML's `rowValidationXSDPath`, ...): a confined tenant's reads go through its locator."""
    if not reach.confined:
        return []
    return [
        Problem(
            (*loc, "options", key),
            f"reader option {key!r} names a file or folder outside the locator; put the path "
            "in the locator, under the system's root",
        )
        for key in read_options
        if key.lower() in ("path", "paths")
        or (key.lower().endswith("path") and key.lower() != "pathglobfilter")
    ]


def _path_problems(facts: ObjectFacts, loc: tuple[Any, ...]) -> list[Problem]:
    if ".." in facts.locator.replace("\\", "/").split("/"):
        return [Problem((*loc, "locator"), "'..' is not allowed")]
    return []


def _watermark_problems(
    facts: ObjectFacts, lookback: float | str | None, loc: tuple[Any, ...]
) -> list[Problem]:
    wm, types = facts.watermark_column, facts.columns
    if wm is None:
        return [
            Problem((*loc, "watermark_column"), "an incremental source needs a watermark_column")
        ]
    if wm not in types:
        return [Problem((*loc, "watermark_column"), f"{wm!r} is not a declared column")]
    if not is_watermark_type(types[wm]):
        return [
            Problem(
                (*loc, "watermark_column"),
                f"{wm!r} is {types[wm]}; a watermark must be numeric, a date or a timestamp",
            )
        ]
    if lookback is not None:
        temporal = types[wm] in ("date", "timestamp")
        if temporal != isinstance(lookback, str):
            want = "a duration such as '2 hours'" if temporal else "a number"
            return [Problem((*loc, "lookback"), f"a {types[wm]} watermark's lookback is {want}")]
    return []
