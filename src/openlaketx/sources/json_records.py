"""JSON documents (json files, http records) read the way real feeds write them.

- **Numbers as strings.** Feeds send `"year": "2013"` as often as `2013`. Spark's reader,
  given `year INT`, marks the whole record malformed and says nothing of which field. So the
  declared scalar columns are read as strings (Spark keeps a number's text, and an object's
  or an array's JSON) and cast in the same projection, each with `try_cast`: a value that
  parses cleanly is typed, one that does not makes its row malformed with a reason naming
  the field and what it held (`year: expected int, got string 'abc'`), kept in
  `_corrupt_record` before the record itself. One pass, no extra job.
- **Nested types** (`array<...>`, `map<string,...>`, `struct<...>`) are read typed by Spark's
  reader: a document that does not fit is malformed, its line kept.
- **Undeclared fields** are schema drift, as a CSV header's extra column is: their names are
  found without Spark (the landed pages' keys, or the first lines of each file) and read as
  strings, for the source's profile to decide (`column_added`).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from lakeguard.records.schema.fingerprint import SchemaColumn
from lakeguard.records.schema.types import canonical, is_nested, spark_ddl
from lakeguard.records.sources.records import SourceObjectDef
from lakeguard.words.quoting import quote, sql_string
from lakeguard.words.vocabulary import CORRUPT_RECORD
from openlaketx import storage
from openlaketx.sources.listing import listing_path

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# How much of each JSON file is sampled for its field names (the whole file, when smaller).
SAMPLE_BYTES = 1 << 16
SAMPLE_LINES = 64
# How much of a value that does not parse a reason quotes.
QUOTED = 40
_NUMBER = r"^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$"


def declared(obj: SourceObjectDef) -> list[SchemaColumn]:
    """The declared columns in order, nested types as their fields are named (a scalar's
    type in lower case, as `files.declared_columns` has it)."""
    return [
        SchemaColumn(
            c.column_name,
            canonical(c.data_type) if is_nested(c.data_type) else c.data_type.lower(),
            c.nullable,
        )
        for c in sorted(obj.columns, key=lambda c: c.ordinal)
    ]


def live_columns(obj: SourceObjectDef, fields: Iterable[str]) -> list[SchemaColumn]:
    """The declared columns, then the fields the documents have that none declares (as
    strings, in the order first seen): what the source really sends."""
    columns = declared(obj)
    known = {c.name.lower() for c in columns}
    for name in fields:
        if name.lower() not in known and name != CORRUPT_RECORD:
            columns.append(SchemaColumn(name, "string", True))
            known.add(name.lower())
    return columns


def record_fields(records: Iterable[Any]) -> list[str]:
    """The top-level field names of landed records, in the order first seen."""
    seen: dict[str, None] = {}
    for record in records:
        if isinstance(record, Mapping):
            seen.update(dict.fromkeys(str(k) for k in record))
    return list(seen)


def sampled_fields(paths: Iterable[str], options: Mapping[str, str]) -> list[str]:
    """The field names of the first lines of each JSON lines file, read without Spark (none
    for multi-line documents, which only a full parse could tell). A line cut off by the
    sample, or one that does not parse, is left out: the read marks it malformed anyway."""
    if options.get("multiLine", options.get("multiline", "false")).lower() == "true":
        return []
    seen: dict[str, None] = {}
    for path in paths:
        for line in _head_lines(path, options.get("encoding", "utf-8")):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            seen.update(dict.fromkeys(record_fields([record])))
    return list(seen)


def _head_lines(path: str, encoding: str) -> list[str]:
    local = listing_path(path)
    with storage.open_input(local if local is not None else path) as handle:
        head = handle.read(SAMPLE_BYTES)
    whole = len(head) < SAMPLE_BYTES
    if head[:2] == b"\x1f\x8b":  # gzip (Spark reads `.gz` files by their extension)
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        head = inflate.decompress(head, SAMPLE_BYTES)
        whole = whole and inflate.eof and not inflate.unconsumed_tail
    lines = head.decode(encoding, errors="replace").splitlines()
    if not whole and lines:
        lines = lines[:-1]  # the sample may have cut the last one
    return [line for line in lines[:SAMPLE_LINES] if line.strip()]


def reader_schema(columns: list[SchemaColumn]) -> str:
    """The schema Spark's JSON reader is given: declared scalars as strings (cast after, one
    by one), nested types as declared, and the column for a line that is no JSON at all."""
    parts = [
        f"{quote(c.name)} {spark_ddl(c.type) if is_nested(c.type) else 'STRING'}" for c in columns
    ]
    return ", ".join([*parts, f"{quote(CORRUPT_RECORD)} STRING"])


def read(
    spark: SparkSession, obj: SourceObjectDef, paths: list[str], columns: list[SchemaColumn]
) -> DataFrame:
    """`paths` read as JSON with `columns`, each scalar cast to its type, and every row that
    does not fit marked in `_corrupt_record` (one projection over the reader's rows)."""
    raw = (
        spark.read.format("json")
        .options(**obj.read_options)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
        .schema(reader_schema(columns))
        .load(paths)
    )
    return raw.selectExpr(*typed_sql(columns, obj.read_options))


def typed_sql(columns: list[SchemaColumn], options: Mapping[str, str]) -> list[str]:
    """The projection that types the read (pure): one SQL expression per column, so one
    round trip each, then `_corrupt_record` with the reasons of the values that failed."""
    selected, reasons = [], []
    for c in columns:
        name = quote(c.name)
        kind = c.type.lower()
        if is_nested(kind) or kind == "string":
            selected.append(name)
            continue
        value = _cast(name, kind, options)
        selected.append(f"{value} AS {name}")
        shown = sql_string(f"{c.name}: expected {kind}, got ")
        reasons.append(
            f"CASE WHEN {name} IS NOT NULL AND ({value}) IS NULL "
            f"THEN concat({shown}, {_shape(name)}) END"
        )
    corrupt = quote(CORRUPT_RECORD)
    if reasons:
        why = f"nullif(concat_ws('; ', {', '.join(reasons)}), '')"
        record = "to_json(struct(" + ", ".join(quote(c.name) for c in columns) + "))"
        corrupt = (
            f"coalesce({corrupt}, CASE WHEN {why} IS NOT NULL "
            f"THEN concat({why}, ' | ', {record}) END)"
        )
    return [*selected, f"{corrupt} AS {quote(CORRUPT_RECORD)}"]


def _cast(name: str, kind: str, options: Mapping[str, str]) -> str:
    """A string as the declared scalar, null where it does not parse cleanly."""
    if kind == "boolean":  # only the words: try_cast would take 'yes', 't' and '1'
        return f"CASE lower(trim({name})) WHEN 'true' THEN true WHEN 'false' THEN false END"
    if kind == "timestamp":
        fmt = options.get("timestampFormat")
        text = (
            f"try_to_timestamp({name}, {sql_string(fmt)})"
            if fmt
            else f"try_cast({name} AS TIMESTAMP)"
        )
        # a whole number is epoch seconds, as Spark's reader takes a JSON number
        return (
            f"CASE WHEN {name} RLIKE '^-?[0-9]{{1,12}}$' "
            f"THEN timestamp_seconds(CAST({name} AS BIGINT)) ELSE {text} END"
        )
    if kind == "date":
        fmt = options.get("dateFormat")
        return f"try_to_date({name}, {sql_string(fmt)})" if fmt else f"try_cast({name} AS DATE)"
    return f"try_cast({name} AS {kind.upper()})"


def _shape(name: str) -> str:
    """What a value that did not parse looked like, for its reason."""
    cut = (
        f"concat(substring({name}, 1, {QUOTED}), "
        f"CASE WHEN length({name}) > {QUOTED} THEN '...' ELSE '' END)"
    )
    return (
        f"CASE WHEN startswith(ltrim({name}), '{{') THEN 'an object' "
        f"WHEN startswith(ltrim({name}), '[') THEN 'an array' "
        f"WHEN {name} IN ('true', 'false') THEN concat('boolean ', {name}) "
        f"WHEN {name} RLIKE '{_NUMBER}' THEN concat('number ', {cut}) "
        f"ELSE concat('string ''', {cut}, '''') END"
    )
