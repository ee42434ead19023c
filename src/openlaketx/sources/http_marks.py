"""What an `http` read asks and says from its progress marks: the watermark parameter of a
records source, the file as last approved or as a blocked batch read it, a declaration's
digest (a rejection holds while it is unchanged), and the notes of a read with nothing new."""

from __future__ import annotations

import json

from lakeguard.records.sources.kinds.http import FetchedFile, HttpObjectOptions, RejectedFetch
from lakeguard.records.sources.progress import SourceProgress, WatermarkMark
from lakeguard.records.sources.records import SourceObjectDef
from lakeguard.words.hashing import digest
from openlaketx.sources.watermarks import Above, above


def watermark_param(
    obj: SourceObjectDef, options: HttpObjectOptions, progress: SourceProgress
) -> tuple[dict[str, str], Above | None]:
    """The query parameter that asks for records above the last watermark (less the
    lookback, in the parameter's format), and where the read starts; before the first
    approved batch, `watermark_start` if the source names one (and no bound)."""
    if options.watermark_param is None or obj.watermark_column is None:
        return {}, None
    last = progress.last(obj.source_object_id, WatermarkMark)
    if last is None:
        start = options.watermark_start
        return ({options.watermark_param: start} if start is not None else {}), None
    declared = {c.column_name: c.data_type for c in obj.columns}
    found = above(
        last.watermark, declared[obj.watermark_column], obj.lookback, options.watermark_format
    )
    return {options.watermark_param: found.sent}, found


def declaration(obj: SourceObjectDef) -> str:
    """A digest of how a source object is declared (format, options, columns, malformed
    budget): a rejection holds only while it is unchanged, since another declaration may read
    the same content well."""
    return digest(
        json.dumps(
            {
                "format": obj.format,
                "read_options": obj.read_options,
                "options": obj.options.model_dump(mode="json"),
                "columns": [(c.column_name, c.data_type) for c in obj.columns],
                "max_malformed_ratio": obj.max_malformed_ratio,
            },
            sort_keys=True,
        )
    )


def approved_watermark(obj: SourceObjectDef, progress: SourceProgress) -> str:
    last = progress.last(obj.source_object_id, WatermarkMark)
    return last.watermark if last is not None else ""


def file_baselines(
    obj: SourceObjectDef, progress: SourceProgress, shown: str
) -> tuple[FetchedFile | None, RejectedFetch | None]:
    """The file as last approved, and as a blocked batch read it since (if that still holds)."""
    last = progress.of(obj.source_object_id, FetchedFile).get(shown)
    rejected = progress.of(obj.source_object_id, RejectedFetch).get(shown)
    after = last.content_hash if last is not None else ""
    if rejected is None or not rejected.holds(declaration(obj), after):
        return last, None
    return last, rejected


def same(rejected: RejectedFetch, now: RejectedFetch) -> bool:
    """Whether a read finds what a blocked batch read, under the same declaration."""
    return rejected.holds(now.declared, now.after) and rejected.content_hash == now.content_hash


def unchanged(shown: str, rejected: RejectedFetch | None) -> str:
    if rejected is None:
        return f"{shown} has not changed since it was read"
    return (
        f"{shown} has not changed since its batch was blocked as malformed (run "
        f"{rejected.run_id}); nothing new until the source or its declaration changes"
    )


def no_records(bound: Above | None, shown: str) -> str:
    if bound is None:
        return f"no records at {shown}"
    if bound.inclusive:
        return f"no records from {bound.lower} on at {shown}"
    return f"no records above {bound.lower} at {shown}"
