"""HTTP sources: a file fetched by URL, or the records of a paged JSON API.

What a read fetches lands first in the run's own landing folder (inside the table's folder,
never named by its Delta log), then Spark reads it with the approved schema, like a file
source. The landing folder is deleted once the batch is staged; a crash's is swept by the next
run. Exactly once: what was taken is a progress mark (a file's URL, ETag, Last-Modified and
content hash; the highest watermark of a records source) that counts only when the batch is
approved, so a run killed between fetching and committing fetches the same again and loads it
once. A file whose body is not the declared file (an HTML error page, a truncated gzip) is put
aside in `rejected_files` (`on_bad_file: reject`): its ETag and Last-Modified are sent back, so
an unchanged body is not fetched, nor rejected, again. See `lakeguard.records.sources.kinds.http`
for the options.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from lakeguard.records.reach import Reach
from lakeguard.records.schema.drift import Change, diff
from lakeguard.records.sources.kinds import options_as
from lakeguard.records.sources.kinds.http import (
    FetchedFile,
    HttpObjectOptions,
    HttpOptions,
    RejectedFetch,
)
from lakeguard.records.sources.progress import Rejection, SourceProgress
from lakeguard.records.sources.records import SourceObjectDef, SourceSystemDef
from lakeguard.words.hashing import digest
from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import SourceKindName, SourceLoad
from openlaketx.sources import bad_files
from openlaketx.sources.base import ReadContext, SourceEngine
from openlaketx.sources.credentials import resolve, scrub
from openlaketx.sources.files import spark_refusal
from openlaketx.sources.http_body import BadBody, write_lines
from openlaketx.sources.http_client import HttpClient
from openlaketx.sources.http_marks import (
    approved_watermark,
    declaration,
    file_baselines,
    no_records,
    same,
    unchanged,
    watermark_param,
)
from openlaketx.sources.json_records import live_columns, record_fields
from openlaketx.sources.layouts import declared_columns, live_layouts, read_layout
from openlaketx.sources.reads import SourceRead
from openlaketx.sources.watermarks import Above

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def _where(obj: SourceObjectDef) -> str:
    return f"source_objects[{obj.source_object_id}]"


def _client(
    system: SourceSystemDef, obj: SourceObjectDef, reach: Reach, retries: int | None = None
) -> HttpClient:
    """A client for the system: its secret and every connection it makes checked against
    the tenant's reach (a secret never goes where the tenant may not reach)."""
    options = options_as(system.options, HttpOptions)
    where = f"source_systems[{system.source_system_id}]"
    token = resolve(system.credential_ref, where=f"{where}.credential_ref", reach=reach)
    return HttpClient(
        options,
        token,
        where=_where(obj),
        credential_ref=system.credential_ref,
        reach=reach,
        destination_where=f"{where}.options.base_url",
        retries=retries,
        system_where=where,
    )


class HttpSource(SourceEngine):
    """Fetched in Python (httpx), read by Spark from the landing folder."""

    kind = SourceKindName.HTTP

    def read(
        self,
        spark: SparkSession,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        progress: SourceProgress,
        context: ReadContext,
    ) -> SourceRead:
        landing = Path(context.landing)
        shutil.rmtree(landing, ignore_errors=True)
        try:
            with _client(system, obj, context.reach) as client:
                options = options_as(obj.options, HttpObjectOptions)
                read = self._file if options.records is None else self._records
                found = read(spark, client, obj, options, progress, landing, context.run_id)
        except BaseException:
            shutil.rmtree(landing, ignore_errors=True)
            raise
        if found.frame is None:
            shutil.rmtree(landing, ignore_errors=True)
            return found
        found.landing = str(landing)
        found.secret = client.secret
        return found

    def _file(
        self,
        spark: SparkSession,
        client: HttpClient,
        obj: SourceObjectDef,
        options: HttpObjectOptions,
        progress: SourceProgress,
        landing: Path,
        run_id: str,
    ) -> SourceRead:
        shown = client.display(obj.locator, options.params)
        last, blocked = file_baselines(obj, progress, shown)
        aside = progress.rejected_of(obj.source_object_id, FetchedFile).get(shown)
        # the newest body known (put aside as unreadable, read by a batch blocked as wholly
        # malformed, or approved): its validators are sent back, so an unchanged one is
        # neither fetched nor judged again
        since = aside[0] if aside is not None else None
        since = since or (blocked.as_fetched() if blocked is not None else last)
        said = "rejected" if aside is not None else "read"

        def nothing(note: str, rejected: list[Rejection] | None = None) -> SourceRead:
            return SourceRead(
                source_object_id=obj.source_object_id,
                frame=None,
                fingerprint="none",
                note=note,
                rejected=rejected or [],
            )

        def put_aside(mark: FetchedFile, why: str) -> SourceRead:
            if aside is not None and aside[0].same_as(mark):  # no validators: fetched again
                return nothing(f"{shown} has not changed since it was rejected")
            return nothing(f"{shown} {why}: put aside", [Rejection(mark, why)])

        try:
            fetched = client.fetch_file(obj.locator, options, obj.format, landing, since)
        except BadBody as exc:
            if options.on_bad_file != "reject" or exc.mark is None:
                raise  # the whole delivery or nothing: the run fails, naming the body
            return put_aside(exc.mark, scrub(exc.reason, client.token))
        if fetched is None:
            if aside is None and blocked is not None:
                return nothing(unchanged(shown, blocked))
            return nothing(f"{shown} has not changed since it was {said}")
        if blocked is not None and blocked.content_hash == fetched.mark.content_hash:
            return nothing(unchanged(shown, blocked))  # no validators: fetched again
        # what the format check cannot see: binary, not UTF-8
        why = bad_files.unreadable(str(fetched.path), obj.format, obj.read_options)
        if why is not None:
            if options.on_bad_file != "reject":
                raise bad_files.refuse(obj, [(shown, why)], snapshot=False)
            return put_aside(fetched.mark, why)
        if last is not None and last.same_as(fetched.mark):  # back to what was read
            return nothing(f"{shown} has not changed since it was read")
        path = str(fetched.path)
        text_format = obj.format in ("csv", "json")
        layouts = live_layouts(spark, obj, [path])
        frames = [read_layout(spark, obj, paths, cols, text_format) for cols, paths in layouts]
        frame = frames[0]
        for other in frames[1:]:
            frame = frame.unionByName(other, allowMissingColumns=True)
        drift: list[Change] = []
        for columns, _ in layouts:
            drift += [c for c in diff(declared_columns(obj), columns) if c not in drift]
        mark = fetched.mark
        return SourceRead(
            source_object_id=obj.source_object_id,
            frame=frame,
            fingerprint=digest(f"{shown}|{mark.content_hash}"),
            progress=[mark],
            has_corrupt_column=text_format,
            snapshot=obj.load_type == SourceLoad.FULL,
            drift=drift,
            live=layouts[0][0],
            files=[(path, mark)],
            malformed=[
                RejectedFetch(
                    url=shown,
                    content_hash=mark.content_hash,
                    declared=declaration(obj),
                    after=last.content_hash if last is not None else "",
                    run_id=run_id,
                    etag=mark.etag,
                    last_modified=mark.last_modified,
                    size=mark.size,
                )
            ],
        )

    def _records(
        self,
        spark: SparkSession,
        client: HttpClient,
        obj: SourceObjectDef,
        options: HttpObjectOptions,
        progress: SourceProgress,
        landing: Path,
        run_id: str,
    ) -> SourceRead:
        extra, bound = watermark_param(obj, options, progress)
        landing.mkdir(parents=True, exist_ok=True)
        pages, count, fields = [], 0, {}
        content = hashlib.sha256()
        for number, records in enumerate(client.pages(obj.locator, options, extra), start=1):
            if records:
                page = landing / f"page-{number:05d}.json"
                write_lines(page, records)
                pages.append(str(page))
                count += len(records)
                fields.update(dict.fromkeys(record_fields(records)))  # drift, for free
                content.update(json.dumps(records, sort_keys=True).encode())
        shown = client.display(obj.locator, {**options.params, **extra})
        key = client.display(obj.locator, options.params)  # the same whatever the watermark
        rejection = RejectedFetch(
            url=key,
            content_hash=content.hexdigest(),
            declared=declaration(obj),
            after=approved_watermark(obj, progress),
            run_id=run_id,
        )
        rejected = progress.of(obj.source_object_id, RejectedFetch).get(key)
        if pages and rejected is not None and same(rejected, rejection):
            return SourceRead(
                source_object_id=obj.source_object_id,
                frame=None,
                fingerprint="none",
                note=unchanged(shown, rejected),
            )
        incremental = obj.load_type == SourceLoad.INCREMENTAL
        if not pages:
            return SourceRead(
                source_object_id=obj.source_object_id,
                frame=None,
                fingerprint="none",
                note=no_records(bound, shown),
                watermark_column=obj.watermark_column if incremental else None,
            )
        live = live_columns(obj, fields)
        frame = read_layout(spark, obj, pages, live, text_format=True)
        reread = None
        if incremental and bound is not None:
            frame = _above(frame, obj, bound)
            if obj.lookback is not None or bound.inclusive:
                # read again: the lookback's window, or a coarse parameter's whole granule
                declared = {c.column_name: c.data_type for c in obj.columns}
                assert obj.watermark_column is not None
                reread = (obj.watermark_column, bound.lower, declared[obj.watermark_column])
        return SourceRead(
            source_object_id=obj.source_object_id,
            frame=frame,
            fingerprint=digest(f"{shown}|{count}|{bound.lower if bound else None}"),
            watermark_column=obj.watermark_column if incremental else None,
            has_corrupt_column=True,
            snapshot=not incremental,
            reread_from=reread,
            drift=diff(declared_columns(obj), live),
            live=live,
            malformed=[rejection],
        )

    def unreadable(
        self,
        spark: SparkSession,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        read: SourceRead,
        message: str,
    ) -> list[Rejection]:
        options = options_as(obj.options, HttpObjectOptions)
        if options.records is not None or options.on_bad_file != "reject":
            return []  # pages are JSON we wrote; or the whole delivery or nothing
        return bad_files.spark_culprits(
            read.files, message, lambda path: spark_refusal(spark, obj, path)
        )

    def nothing_new(
        self,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        progress: SourceProgress,
        reach: Reach,
    ) -> str | None:
        """A conditional request for a file read before; the first page above the watermark
        for an incremental records source. Any failure (a destination out of reach included):
        let the run look (and say it)."""
        options = options_as(obj.options, HttpObjectOptions)
        try:
            with _client(system, obj, reach, retries=0) as client:
                if options.records is None:
                    return _fileunchanged(client, obj, options, progress)
                if obj.load_type != SourceLoad.INCREMENTAL:
                    return None  # a snapshot: only a read can tell
                extra, bound = watermark_param(obj, options, progress)
                if bound is None:
                    return None
                # a coarse parameter's first page holds the rows of its granule the dataset
                # has: only a read can tell whether any is new
                first = next(client.pages(obj.locator, options, extra), [])
                if first:
                    return None
                return no_records(bound, client.display(obj.locator, options.params))
        except Exception:  # the run reads the source and says what is wrong
            return None


def _fileunchanged(
    client: HttpClient, obj: SourceObjectDef, options: HttpObjectOptions, progress: SourceProgress
) -> str | None:
    shown = client.display(obj.locator, options.params)
    approved, blocked = file_baselines(obj, progress, shown)
    aside = progress.rejected_of(obj.source_object_id, FetchedFile).get(shown)
    # put aside or read by a blocked batch since it was approved: unchanged means still that
    last = aside[0] if aside is not None else None
    last = last or (blocked.as_fetched() if blocked is not None else approved)
    if last is None or not (last.etag or last.last_modified):
        return None  # never read, or the server keeps no validators: only a fetch can tell
    conditions = {"If-None-Match": last.etag} if last.etag else {}
    if last.last_modified:
        conditions["If-Modified-Since"] = last.last_modified
    response = client.get(obj.locator, options.params, conditions)
    response.close()
    if response.status_code != 304:
        return None
    if aside is None:
        return unchanged(shown, blocked)
    return f"{shown} has not changed since it was rejected"


def _above(frame: DataFrame, obj: SourceObjectDef, bound: Above) -> DataFrame:
    """Rows above the lower bound, or at it for a coarse parameter's granule (a server may
    ignore or round the parameter)."""
    from pyspark.sql import functions as F  # start-up time: pyspark only where Spark runs

    assert obj.watermark_column is not None
    declared = {c.column_name: c.data_type for c in obj.columns}
    column = F.col(quote(obj.watermark_column))
    lower = F.lit(bound.lower).cast(declared[obj.watermark_column])
    return frame.where(column >= lower if bound.inclusive else column > lower)
